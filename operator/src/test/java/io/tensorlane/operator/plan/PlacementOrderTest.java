package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.llama405bFp8;
import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.PlacementSpec.InterconnectRequirement;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Best-fit order of node classes (Placement.fittingClasses) and the Planner's walk down that order. */
class PlacementOrderTest {
    static final String PRO = "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition";

    /** The demo's seven simulated nodes (hack/demo.sh), {@code used} GPUs taken on each. */
    static List<NodeInfo> demo(Map<String, Integer> used) {
        return List.of(
                node("gpu-pcie-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, used.getOrDefault("gpu-pcie-0", 0)),
                node("gpu-nvlink-0", TopologyFixtures.H200_SXM_8, used.getOrDefault("gpu-nvlink-0", 0)),
                node("gpu-nvlink-1", TopologyFixtures.H200_SXM_8, used.getOrDefault("gpu-nvlink-1", 0)),
                node("gpu-l40s-0", TopologyFixtures.L40S_2, used.getOrDefault("gpu-l40s-0", 0)),
                node("gpu-l40s-1", TopologyFixtures.L40S_2, used.getOrDefault("gpu-l40s-1", 0)),
                node("gpu-l40s-2", TopologyFixtures.L40S_2, used.getOrDefault("gpu-l40s-2", 0)),
                node("gpu-4090-0", TopologyFixtures.RTX_4090_4, used.getOrDefault("gpu-4090-0", 0)));
    }

    record Order(String name, int tensor, Map<String, Integer> used, List<String> classes) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Order> orders() {
        // the same order whatever is free: the two rows per tensor size differ only in used GPUs
        Map<String, Integer> busy = Map.of(
                "gpu-l40s-0", 2, "gpu-l40s-1", 2, "gpu-l40s-2", 1, "gpu-nvlink-0", 6, "gpu-pcie-0", 0, "gpu-4090-0", 3);
        List<String> tp1 = List.of("NVIDIA-L40S", "NVIDIA-GeForce-RTX-4090", "NVIDIA-H200", PRO);
        List<String> tp2 = List.of(
                "NVIDIA-L40S/PCIe/Full",
                "NVIDIA-H200/NVLink/Full",
                PRO + "/PCIe/Full",
                "NVIDIA-GeForce-RTX-4090/PCIe/None");
        List<String> tp4 = List.of("NVIDIA-H200/NVLink/Full", PRO + "/PCIe/Full", "NVIDIA-GeForce-RTX-4090/PCIe/None");
        List<String> tp8 = List.of("NVIDIA-H200/NVLink/Full", PRO + "/PCIe/Full");
        return Stream.of(
                new Order(
                        "TP 1: fewest GPUs per node first (no allreduce to rank by), NVLink before PCIe at 8",
                        1,
                        Map.of(),
                        tp1),
                new Order("TP 1, other GPUs taken: same order", 1, busy, tp1),
                new Order(
                        "TP 2: custom-capable 2-GPU L40S, then 8-GPU NVLink, 8-GPU PCIe, no-P2P 4090 last",
                        2,
                        Map.of(),
                        tp2),
                new Order("TP 2, other GPUs taken: same order", 2, busy, tp2),
                new Order("TP 4: custom before no-P2P even though the 4090 box is smaller", 4, Map.of(), tp4),
                new Order("TP 4, other GPUs taken: same order", 4, busy, tp4),
                new Order("TP 8: only the 8-GPU boxes, NVLink first", 8, Map.of(), tp8),
                new Order("TP 8, other GPUs taken: same order", 8, busy, tp8));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("orders")
    void classesComeBestFitFirst(Order o) {
        List<Placement.Verdict> verdicts =
                Placement.judge(demo(o.used()), o.tensor(), InterconnectRequirement.Any, Map.of(), false, SETTINGS);

        assertThat(Placement.fittingClasses(verdicts, o.tensor(), InterconnectRequirement.Any))
                .extracting(Placement.NodeClass::describe)
                .containsExactlyElementsOf(o.classes());
    }

    @Test
    void demoSamplesLeaveTheH200BoxesToThe405b() {
        // the demo's bug: two TP-2 8B samples took 2 GPUs of each H200 box, so the TP-8 405B sample was Unschedulable
        Plan first = Planner.plan(llama8b(2), demo(Map.of()), SETTINGS);
        Plan second = Planner.plan(llama8b(2), demo(Map.of("gpu-l40s-0", 2)), SETTINGS);
        Plan big = Planner.plan(llama405bFp8(8), demo(Map.of("gpu-l40s-0", 2, "gpu-l40s-1", 2)), SETTINGS);

        assertThat(first.placement().labels()).containsEntry(TopologyLabels.GPU_PRODUCT, "NVIDIA-L40S");
        assertThat(second.placement().nodes()).containsExactly("gpu-l40s-1", "gpu-l40s-2");
        assertThat(big.outcome()).as(big.message()).isEqualTo(Outcome.OK);
        assertThat(big.placement().nodes()).containsExactly("gpu-nvlink-0", "gpu-nvlink-1");
    }

    @Test
    void allL40sPairsTakenSendsTheNextTp2ModelToTheH200Boxes() {
        Plan plan = Planner.plan(llama8b(2), demo(Map.of("gpu-l40s-0", 2, "gpu-l40s-1", 2, "gpu-l40s-2", 2)), SETTINGS);

        assertThat(plan.placement().labels()).containsEntry(TopologyLabels.GPU_PRODUCT, "NVIDIA-H200");
    }

    @Test
    void aRunningDeploymentStaysInItsClassWhenABetterFittingOneFreesUp() {
        // placed on an H200 box while every L40S pair was taken; then the L40S pairs free up
        Map<String, Integer> lateL40sFree = Map.of();
        PlannerSettings running = SETTINGS.withCurrentNodes(java.util.Set.of("gpu-nvlink-0"));

        Plan stays = Planner.plan(llama8b(2), demo(lateL40sFree), running);
        Plan fresh = Planner.plan(llama8b(2), demo(lateL40sFree), SETTINGS);

        assertThat(stays.placement().labels()).containsEntry(TopologyLabels.GPU_PRODUCT, "NVIDIA-H200");
        assertThat(fresh.placement().labels()).containsEntry(TopologyLabels.GPU_PRODUCT, "NVIDIA-L40S");
    }

    @Test
    void aRunningDeploymentLeavesItsClassWhenTheSpecNoLongerFitsThere() {
        // running on L40S pairs; the user now asks for NVLink: the current class no longer satisfies the placement
        var spec = llama8b(2);
        spec.placement.interconnect = InterconnectRequirement.NVLink;
        Plan moved = Planner.plan(spec, demo(Map.of()), SETTINGS.withCurrentNodes(java.util.Set.of("gpu-l40s-0")));

        assertThat(moved.outcome()).isEqualTo(Outcome.OK);
        assertThat(moved.placement().labels()).containsEntry(TopologyLabels.GPU_PRODUCT, "NVIDIA-H200");
    }

    @Test
    void okMessageNamesTheClassesTheModelDidNotFit() {
        Plan plan = Planner.plan(llama70b(2), Fixtures.h200AndL40s(), SETTINGS);

        assertThat(plan.outcome()).isEqualTo(Outcome.OK);
        assertThat(plan.message()).contains("(the model does not fit on NVIDIA-L40S/PCIe/Full); NVLink");
        assertThat(plan.memory().gpuMemoryBytes()).isEqualTo(150_754_820_096L);
    }

    @Test
    void doesNotFitCarriesTheBestClassNumbers() {
        Plan plan = Planner.plan(llama405bFp8(2), Fixtures.h200AndL40s(), SETTINGS);

        assertThat(plan.outcome()).isEqualTo(Outcome.DOES_NOT_FIT);
        assertThat(plan.message())
                .startsWith("model does not fit: per GPU it needs weights ")
                .endsWith(
                        "> 45.0 GiB; use more GPUs (parallelism.tensor) or lower serving.maxModelLength / maxBatchTokens "
                                + "(node classes tried, best first: NVIDIA-L40S/PCIe/Full, NVIDIA-H200/NVLink/Full)");
        assertThat(plan.placement().nodes()).containsExactly("l40s-0", "l40s-1", "l40s-2");
        assertThat(plan.memory().gpuMemoryBytes()).isEqualTo(48_305_799_168L);
    }

    @Test
    void doesNotFitNamesAClassWithoutFreeGpusAsTried() {
        Plan plan = Planner.plan(
                llama405bFp8(2),
                List.of(node("l40s-0", TopologyFixtures.L40S_2, 0), node("h200-0", TopologyFixtures.H200_SXM_8, 8)),
                SETTINGS);

        assertThat(plan.outcome()).isEqualTo(Outcome.DOES_NOT_FIT);
        assertThat(plan.message())
                .endsWith(
                        "(node classes tried, best first: NVIDIA-L40S/PCIe/Full, NVIDIA-H200/NVLink/Full (no free GPUs))");
    }
}
