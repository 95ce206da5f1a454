package io.tensorlane.operator.plan;

import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static io.tensorlane.operator.plan.PlannerCases.H200;
import static io.tensorlane.operator.plan.PlannerCases.L40S;
import static io.tensorlane.operator.plan.PlannerCases.PRO;

import io.tensorlane.operator.plan.PlannerCases.Case;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Memory fit and spec checks of the planner: models fitting some node classes or none, bad tensor size or fraction. */
class PlannerFitTableTest {
    static Stream<Case> cases() {
        return Stream.of(
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
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void plans(Case c) {
        PlannerCases.check(c);
    }
}
