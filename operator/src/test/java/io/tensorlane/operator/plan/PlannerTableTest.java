package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.cpuNode;
import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.api.v1alpha1.AllreduceSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.api.v1alpha1.PlacementSpec.InterconnectRequirement;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Placement and allreduce choice over the recorded topologies. */
class PlannerTableTest {
    static final String PRO = TopologyFixtures.RTX_PRO_6000_PCIE_8;
    static final String H200 = TopologyFixtures.H200_SXM_8;
    static final String RTX4090 = TopologyFixtures.RTX_4090_4;
    static final String L40S = TopologyFixtures.L40S_2;
    static final long K = 1024;
    static final long M = 1024 * 1024;

    record Case(
            String name,
            InferenceDeploymentSpec spec,
            List<NodeInfo> nodes,
            Outcome outcome,
            String mode,
            List<String> table,
            List<String> nodesChosen,
            String messageContains,
            Map<String, String> ncclEnv) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Measurement measured(int worldSize, String failure, AlgorithmRange... rows) {
        Measurement m = new Measurement();
        m.time = "2026-11-29T11:00:00Z";
        m.worldSize = worldSize;
        m.failure = failure;
        m.algorithmTable = List.of(rows);
        return m;
    }

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "seed box, TP 8, auto → custom OneStage/Ring with NCCL env",
                        llama70b(8),
                        List.of(node("pro-0", PRO, 0)),
                        Outcome.OK,
                        "Custom",
                        List.of("65536:OneStage", "8388608:Ring"),
                        List.of("pro-0"),
                        "PCIe, full P2P, 8 GPUs in 2 NUMA islands → custom: OneStage ≤ 64 KiB, Ring above",
                        Map.of("NCCL_P2P_LEVEL", "SYS", "NCCL_PROTO", "^LL128")),
                new Case(
                        "H200 NVLink TP 8 → OneStage ≤ 512 KiB, TwoStage above",
                        llama70b(8),
                        List.of(node("h200-0", H200, 0)),
                        Outcome.OK,
                        "Custom",
                        List.of("524288:OneStage", "8388608:TwoStage"),
                        List.of("h200-0"),
                        "NVLink, 8 GPUs → custom: OneStage ≤ 512 KiB, TwoStage above, NCCL above 8 MiB",
                        Map.of()),
                new Case(
                        "L40S pair over PHB → OneStage throughout",
                        llama8b(2),
                        List.of(node("l40s-0", L40S, 0)),
                        Outcome.OK,
                        "Custom",
                        List.of("8388608:OneStage"),
                        List.of("l40s-0"),
                        "custom: OneStage",
                        Map.of("NCCL_P2P_LEVEL", "PHB", "NCCL_PROTO", "^LL128")),
                new Case(
                        "RTX 4090 without P2P → NCCL",
                        llama8b(4),
                        List.of(node("rtx4090-0", RTX4090, 0)),
                        Outcome.OK,
                        "NCCL",
                        List.of(),
                        List.of("rtx4090-0"),
                        "PCIe, P2P None, 4 GPUs in 4 islands → NCCL: the custom allreduce needs full P2P; NCCL env NCCL_PROTO=^LL128",
                        null),
                new Case(
                        "TP 1 → no allreduce",
                        llama8b(1),
                        List.of(node("h200-0", H200, 7)),
                        Outcome.OK,
                        "None",
                        List.of(),
                        List.of("h200-0"),
                        "tensor parallelism 1",
                        Map.of()),
                new Case(
                        "mode NCCL forced on NVLink",
                        with(llama70b(8), s -> s.allreduce.mode = AllreduceSpec.AllreduceMode.NCCL),
                        List.of(node("h200-0", H200, 0)),
                        Outcome.OK,
                        "NCCL",
                        List.of(),
                        List.of("h200-0"),
                        "NCCL (allreduce.mode NCCL)",
                        Map.of()),
                new Case(
                        "mode Custom where P2P is absent → InvalidSpec",
                        with(llama8b(4), s -> s.allreduce.mode = AllreduceSpec.AllreduceMode.Custom),
                        List.of(node("rtx4090-0", RTX4090, 0)),
                        Outcome.INVALID_SPEC,
                        null,
                        null,
                        null,
                        "allreduce.mode Custom needs full P2P",
                        null),
                new Case(
                        "mode Custom with a P2P node besides one without → the P2P node",
                        with(llama8b(4), s -> s.allreduce.mode = AllreduceSpec.AllreduceMode.Custom),
                        List.of(node("rtx4090-0", RTX4090, 0), node("pro-0", PRO, 0)),
                        Outcome.OK,
                        "Custom",
                        List.of("65536:OneStage", "8388608:Ring"),
                        List.of("pro-0"),
                        "(allreduce.mode Custom)",
                        null),
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
                        "H200 + L40S: TP 2 70B does not fit 48 GB L40S → next class, H200",
                        llama70b(2),
                        Fixtures.h200AndL40s(),
                        Outcome.OK,
                        "Custom",
                        List.of("8388608:OneStage"),
                        List.of("h200-0", "h200-1"),
                        "NVLink, 8 GPUs → custom: OneStage",
                        Map.of()),
                new Case(
                        "H200 + L40S: TP 2 405B fits nowhere → DoesNotFit from L40S, naming the classes tried",
                        Fixtures.llama405bFp8(2),
                        Fixtures.h200AndL40s(),
                        Outcome.DOES_NOT_FIT,
                        null,
                        null,
                        null,
                        "(node classes tried, best first: NVIDIA-L40S/PCIe/Full, NVIDIA-H200/NVLink/Full)",
                        null),
                new Case(
                        "TP 2 70B fits only on the H200 class, whose GPUs are taken → Unschedulable, not DoesNotFit",
                        llama70b(2),
                        List.of(node("h200-0", H200, 7), node("l40s-0", L40S, 0)),
                        Outcome.UNSCHEDULABLE,
                        null,
                        null,
                        null,
                        "no node with 2 free GPUs in a class the model fits on (NVIDIA-H200/NVLink/Full; h200-0: 8 GPUs "
                                + "NVLink but 1 free); it does not fit on NVIDIA-L40S/PCIe/Full: model does not fit",
                        null),
                new Case(
                        "stale topology keeps its last-seen choice in Auto (with a warning)",
                        llama70b(8),
                        List.of(node("pro-0", PRO, 0, t -> {}, true)),
                        Outcome.OK,
                        "Custom",
                        List.of("65536:OneStage", "8388608:Ring"),
                        List.of("pro-0"),
                        "custom",
                        Map.of("NCCL_P2P_LEVEL", "SYS", "NCCL_PROTO", "^LL128")),
                new Case(
                        "stale topology and mode Custom → Unschedulable",
                        with(llama70b(8), s -> s.allreduce.mode = AllreduceSpec.AllreduceMode.Custom),
                        List.of(node("pro-0", PRO, 0, t -> {}, true)),
                        Outcome.UNSCHEDULABLE,
                        null,
                        null,
                        null,
                        "pro-0: 8 GPUs, topology stale",
                        null),
                new Case(
                        "failed preflight → NCCL with its reason",
                        llama70b(8),
                        List.of(node(
                                "pro-0",
                                PRO,
                                0,
                                t -> t.measurement = measured(8, "selftest mismatch on rank 5"),
                                false)),
                        Outcome.OK,
                        "NCCL",
                        List.of(),
                        List.of("pro-0"),
                        "preflight failed: selftest mismatch on rank 5",
                        null),
                new Case(
                        "measured table replaces the default and is clipped to maxMessageBytes",
                        with(llama70b(8), s -> s.allreduce.maxMessageBytes = 4 * M),
                        List.of(node(
                                "pro-0",
                                PRO,
                                0,
                                t -> t.measurement = measured(
                                        8,
                                        null,
                                        new AlgorithmRange(32 * K, "OneStage"),
                                        new AlgorithmRange(2 * M, "TwoStage"),
                                        new AlgorithmRange(16 * M, "Ring")),
                                false)),
                        Outcome.OK,
                        "Custom",
                        List.of("32768:OneStage", "2097152:TwoStage", "4194304:Ring"),
                        List.of("pro-0"),
                        "OneStage ≤ 32 KiB, TwoStage ≤ 2 MiB, Ring above (measured by the preflight",
                        null),
                new Case(
                        "measured table for another world size is not used",
                        llama8b(4),
                        List.of(node(
                                "pro-0",
                                PRO,
                                0,
                                t -> t.measurement = measured(8, null, new AlgorithmRange(16 * M, "TwoStage")),
                                false)),
                        Outcome.OK,
                        "Custom",
                        List.of("65536:OneStage", "8388608:Ring"),
                        List.of("pro-0"),
                        "Ring above",
                        null),
                new Case(
                        "forced algorithm → one row",
                        with(llama70b(8), s -> s.allreduce.algorithm = AllreduceSpec.AllreduceAlgorithm.OneStage),
                        List.of(node("pro-0", PRO, 0)),
                        Outcome.OK,
                        "Custom",
                        List.of("8388608:OneStage"),
                        List.of("pro-0"),
                        "(allreduce.algorithm OneStage)",
                        null),
                new Case(
                        "measurement older than the limit is ignored (failure too)",
                        llama70b(8),
                        List.of(node(
                                "pro-0",
                                PRO,
                                0,
                                t -> {
                                    t.measurement = measured(8, "old failure");
                                    t.measurement.time = "2026-10-01T00:00:00Z";
                                },
                                false)),
                        Outcome.OK,
                        "Custom",
                        List.of("65536:OneStage", "8388608:Ring"),
                        List.of("pro-0"),
                        "custom",
                        null),
                new Case(
                        "heuristic topology → NCCL in Auto",
                        llama70b(8),
                        List.of(node(
                                "pro-0",
                                PRO,
                                0,
                                t -> t.source = io.tensorlane.api.v1alpha1.GpuTopologyStatus.Source.heuristic,
                                false)),
                        Outcome.OK,
                        "NCCL",
                        List.of(),
                        List.of("pro-0"),
                        "heuristic",
                        null),
                new Case(
                        "TP 3 does not divide 64 heads → InvalidSpec",
                        llama70b(3),
                        List.of(node("pro-0", PRO, 0)),
                        Outcome.INVALID_SPEC,
                        null,
                        null,
                        null,
                        "spec.parallelism.tensor 3 must divide",
                        null),
                new Case(
                        "fraction 1.5 → InvalidSpec",
                        with(llama70b(8), s -> s.memory.fraction = "1.5"),
                        List.of(node("pro-0", PRO, 0)),
                        Outcome.INVALID_SPEC,
                        null,
                        null,
                        null,
                        "spec.memory.fraction must be 'auto' or a number in (0, 1), got '1.5'",
                        null),
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
        Plan plan = Planner.plan(c.spec(), c.nodes(), SETTINGS);

        assertThat(plan.outcome()).as(plan.message()).isEqualTo(c.outcome());
        String text = plan.ok() ? plan.allreduce().reason() : plan.message();
        assertThat(text).contains(c.messageContains());
        if (c.mode() != null) {
            assertThat(plan.allreduce().mode().name()).isEqualTo(c.mode());
            assertThat(plan.allreduce().table())
                    .extracting(r -> r.upToBytes + ":" + r.algorithm)
                    .containsExactlyElementsOf(c.table());
            assertThat(plan.placement().nodes()).containsExactlyElementsOf(c.nodesChosen());
        }
        if (c.ncclEnv() != null) {
            assertThat(plan.allreduce().ncclEnv())
                    .extracting(AllreduceChoice.NcclEnv::name, AllreduceChoice.NcclEnv::value)
                    .containsExactlyInAnyOrderElementsOf(c.ncclEnv().entrySet().stream()
                            .map(e -> org.assertj.core.groups.Tuple.tuple(e.getKey(), e.getValue()))
                            .toList());
        }
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
