package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.cpuNode;
import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static io.tensorlane.operator.plan.PlannerCases.H200;
import static io.tensorlane.operator.plan.PlannerCases.M;
import static io.tensorlane.operator.plan.PlannerCases.PRO;
import static io.tensorlane.operator.plan.PlannerCases.RTX4090;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.PlacementSpec.InterconnectRequirement;
import io.tensorlane.operator.plan.PlannerCases.Case;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Placement over the recorded topologies: node choice, node class order, and why nothing is schedulable. */
class PlannerPlacementTableTest {
    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "no node with 8 free GPUs → Unschedulable naming each node",
                        llama70b(8),
                        List.of(node("h200-0", H200, 2), node("rtx4090-0", RTX4090, 0), cpuNode("cpu-0")),
                        Outcome.UNSCHEDULABLE,
                        null,
                        null,
                        null,
                        "no node with 8 free GPUs; h200-0: 8 GPUs NVLink but 6 free; rtx4090-0: 4 GPUs, P2P None (needs 8); "
                                + "cpu-0: no GPUs",
                        null),
                new Case(
                        "NVLink required, only PCIe → Unschedulable",
                        with(llama70b(8), s -> s.placement.interconnect = InterconnectRequirement.NVLink),
                        List.of(node("pro-0", PRO, 0)),
                        Outcome.UNSCHEDULABLE,
                        null,
                        null,
                        null,
                        "no node with 8 free GPUs over NVLink; pro-0: 8 GPUs PCIe (needs NVLink)",
                        null),
                new Case(
                        "nodeSelector not matched",
                        with(llama70b(8), s -> s.placement.nodeSelector = Map.of("pool", "a")),
                        List.of(node("pro-0", PRO, 0)),
                        Outcome.UNSCHEDULABLE,
                        null,
                        null,
                        null,
                        "pro-0: label pool=a missing",
                        null),
                new Case(
                        "NVLink and PCIe nodes → NVLink class first",
                        llama70b(8),
                        List.of(node("pro-0", PRO, 0), node("h200-0", H200, 0), node("h200-1", H200, 8)),
                        Outcome.OK,
                        "Custom",
                        List.of("524288:OneStage", "8388608:TwoStage"),
                        List.of("h200-0"),
                        "NVLink",
                        Map.of()),
                new Case(
                        "best fit: the 4-GPU box before the 8-GPU one, though the 8-GPU one has more free GPUs and memory",
                        llama8b(4),
                        List.of(node("a100-0", TopologyFixtures.A100_PCIE_4, 0), node("pro-0", PRO, 0)),
                        Outcome.OK,
                        "Custom",
                        List.of("65536:OneStage", "8388608:Ring"),
                        List.of("a100-0"),
                        "PCIe, full P2P, 4 GPUs",
                        null),
                new Case(
                        "same GPU count and interconnect: larger GPU memory first, whatever is free",
                        llama8b(4),
                        List.of(
                                node("pro-0", PRO, 4),
                                node(
                                        "pro48-0",
                                        PRO,
                                        0,
                                        t -> {
                                            t.summary.product = "NVIDIA RTX PRO 5000";
                                            t.summary.gpuMemoryBytes = 48L * 1024 * M;
                                        },
                                        false)),
                        Outcome.OK,
                        "Custom",
                        List.of("65536:OneStage", "8388608:Ring"),
                        List.of("pro-0"),
                        "PCIe, full P2P, 8 GPUs",
                        null),
                new Case(
                        "H200 + L40S: TP 2 8B → the L40S pairs, the 8-GPU H200 boxes stay whole",
                        llama8b(2),
                        Fixtures.h200AndL40s(),
                        Outcome.OK,
                        "Custom",
                        List.of("8388608:OneStage"),
                        List.of("l40s-0", "l40s-1", "l40s-2"),
                        "custom: OneStage",
                        Map.of("NCCL_P2P_LEVEL", "PHB", "NCCL_PROTO", "^LL128")),
                new Case(
                        "H200 + L40S: TP 8 405B → H200",
                        Fixtures.llama405bFp8(8),
                        Fixtures.h200AndL40s(),
                        Outcome.OK,
                        "Custom",
                        List.of("524288:OneStage", "8388608:TwoStage"),
                        List.of("h200-0", "h200-1"),
                        "NVLink, 8 GPUs",
                        Map.of()),
                new Case(
                        "no nodes at all",
                        llama70b(8),
                        List.of(),
                        Outcome.UNSCHEDULABLE,
                        null,
                        null,
                        null,
                        "the cluster has no nodes",
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void plans(Case c) {
        PlannerCases.check(c);
    }

    @org.junit.jupiter.api.Test
    void staleTopologyIsWarnedAbout() {
        Plan plan = Planner.plan(llama70b(8), List.of(node("pro-0", PRO, 0, t -> {}, true)), SETTINGS);

        assertThat(plan.warnings())
                .containsExactly(
                        "GpuTopology of pro-0 is stale (older than the operator's limit); the plan uses it as last seen");
    }

    @org.junit.jupiter.api.Test
    void tensorOneSelectsOnProductAndOnARequiredInterconnect() {
        List<NodeInfo> nodes = List.of(node("pro-0", PRO, 0), node("h200-0", H200, 0));
        Plan any = Planner.plan(llama8b(1), nodes, SETTINGS);
        Plan nvlink = Planner.plan(
                with(llama8b(1), s -> s.placement.interconnect = InterconnectRequirement.NVLink), nodes, SETTINGS);

        assertThat(any.placement().affinityRequirements())
                .extracting(r -> r.getKey())
                .containsExactly("tensorlane.io/gpu-product", "tensorlane.io/gpu-count");
        assertThat(nvlink.placement().affinityRequirements())
                .extracting(r -> r.getKey() + " " + r.getValues())
                .containsExactly(
                        "tensorlane.io/gpu-product [NVIDIA-H200]",
                        "tensorlane.io/gpu-interconnect [NVLink]",
                        "tensorlane.io/gpu-count [0]");
    }

    @org.junit.jupiter.api.Test
    void moreReplicasThanFreeSlotsIsAWarningNotAFailure() {
        Plan plan = Planner.plan(with(llama8b(4), s -> s.replicas = 3), List.of(node("pro-0", PRO, 0)), SETTINGS);

        assertThat(plan.outcome()).isEqualTo(Outcome.OK);
        assertThat(plan.warnings())
                .containsExactly(
                        "3 replicas but GPUs for only 2 pod(s) of 4 are free on matching nodes now; the rest stay Pending until GPUs "
                                + "free up");
    }

    @org.junit.jupiter.api.Test
    void affinityIsOnTopologyLabelsNotHostNames() {
        Plan plan = Planner.plan(
                with(llama70b(8), s -> s.placement.nodeSelector = Map.of("pool", "gpu")),
                List.of(new NodeInfo("pro-0", Map.of("pool", "gpu"), 8, 0, TopologyFixtures.load(PRO), false)),
                SETTINGS);

        assertThat(plan.placement().affinityRequirements())
                .extracting(r -> r.getKey() + " " + r.getOperator() + " " + r.getValues())
                .containsExactly(
                        "tensorlane.io/gpu-product In [NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition]",
                        "tensorlane.io/gpu-interconnect In [PCIe]",
                        "tensorlane.io/gpu-p2p In [Full]",
                        "tensorlane.io/gpu-count Gt [7]",
                        "pool In [gpu]");
        assertThat(plan.topologyStatus().nodes).containsExactly("pro-0");
        assertThat(plan.topologyStatus().interconnect).isEqualTo("PCIe");
        assertThat(plan.allreduceStatus().maxMessageBytes).isEqualTo(8 * M);
    }
}
