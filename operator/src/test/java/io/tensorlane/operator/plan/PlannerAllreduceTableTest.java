package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static io.tensorlane.operator.plan.PlannerCases.H200;
import static io.tensorlane.operator.plan.PlannerCases.K;
import static io.tensorlane.operator.plan.PlannerCases.L40S;
import static io.tensorlane.operator.plan.PlannerCases.M;
import static io.tensorlane.operator.plan.PlannerCases.PRO;
import static io.tensorlane.operator.plan.PlannerCases.RTX4090;
import static io.tensorlane.operator.plan.PlannerCases.measured;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.api.v1alpha1.AllreduceSpec;
import io.tensorlane.operator.plan.PlannerCases.Case;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Allreduce choice on the recorded topologies: mode, algorithm table, NCCL env, measurements, stale topology. */
class PlannerAllreduceTableTest {
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
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void plans(Case c) {
        PlannerCases.check(c);
    }
}
