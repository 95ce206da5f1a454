package io.tensorlane.operator.rollback;

import static io.tensorlane.operator.plan.Fixtures.llama70b;
import static io.tensorlane.operator.plan.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.contract.Allreduce;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The rollback decision over states × signals. */
class RollbackDeciderTest {
    static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
    static final long GEN = 4;

    static final InferenceDeploymentSpec GOOD = with(llama70b(8), s -> s.memory.fraction = "0.90");
    static final InferenceDeploymentSpec BAD = with(llama70b(8), s -> s.memory.fraction = "0.95");
    static final InferenceDeploymentSpec AUTO = llama70b(8);

    static AppliedSpec applied(InferenceDeploymentSpec spec, long gen, String rev) {
        return RollbackDecider.applied(spec, gen, rev, NOW.minusSeconds(600));
    }

    static FailureSignal failure(FailureSignal.Kind kind, String rev) {
        return new FailureSignal(kind, "llama-0", rev, "CUDA out of memory in phase ipc-buffers", NOW.minusSeconds(5));
    }

    static RollbackStatus status(long gen, int attempts, String handled, String notBefore, Action... actions) {
        RollbackStatus rb = new RollbackStatus();
        rb.generation = gen;
        rb.attempts = attempts;
        rb.handledRevision = handled;
        rb.notBefore = notBefore;
        int i = 1;
        for (Action a : actions) {
            RollbackStatus.Attempt at = new RollbackStatus.Attempt();
            at.attempt = i++;
            at.action = a;
            rb.history.add(at);
        }
        return rb;
    }

    /** Input builder with the seed's defaults: user spec BAD applied as rev "bad", no stable spec, no failure. */
    static RollbackInput in(Consumer<Builder> change) {
        Builder b = new Builder();
        change.accept(b);
        return new RollbackInput(
                GEN,
                b.user,
                b.applied,
                b.stable,
                b.rollback,
                b.failure,
                b.readySince,
                b.plannedFraction,
                b.plannedAllreduce,
                NOW,
                Duration.ofSeconds(10));
    }

    static class Builder {
        InferenceDeploymentSpec user = BAD;
        AppliedSpec applied = applied(BAD, GEN, "bad");
        AppliedSpec stable;
        RollbackStatus rollback;
        FailureSignal failure;
        Instant readySince;
        double plannedFraction = 0.95;
        Allreduce plannedAllreduce = Allreduce.Custom;
    }

    record Case(String name, RollbackInput input, Class<? extends RollbackDecision> expected, String detail) {
        @Override
        public String toString() {
            return name;
        }
    }

    static final FailureSignal.Kind CUDA = FailureSignal.Kind.CudaOutOfMemory;

    static Stream<Case> cases() {
        return Stream.of(
                new Case(
                        "no failure, not all Ready → nothing",
                        in(b -> {}),
                        RollbackDecision.Nothing.class,
                        "not every replica"),
                new Case(
                        "Ready but inside the stability window → wait",
                        in(b -> b.readySince = NOW.minusSeconds(30)),
                        RollbackDecision.Wait.class,
                        "2026-11-29T12:00:30Z"),
                new Case(
                        "Ready for the window → mark stable",
                        in(b -> b.readySince = NOW.minusSeconds(61)),
                        RollbackDecision.MarkStable.class,
                        "bad"),
                new Case(
                        "already stable → nothing",
                        in(b -> {
                            b.readySince = NOW.minusSeconds(600);
                            b.stable = applied(BAD, GEN, "bad");
                        }),
                        RollbackDecision.Nothing.class,
                        "already the stable one"),
                new Case(
                        "CUDA OOM, stable spec differs → rollback",
                        in(b -> {
                            b.stable = applied(GOOD, GEN - 1, "good");
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.Rollback.class,
                        "revision bad -> good"),
                new Case(
                        "CrashLoop, stable spec differs → rollback",
                        in(b -> {
                            b.stable = applied(GOOD, GEN - 1, "good");
                            b.failure = failure(FailureSignal.Kind.CrashLoopBackOff, "bad");
                        }),
                        RollbackDecision.Rollback.class,
                        "CrashLoopBackOff"),
                new Case(
                        "CrashLoop with onCrashLoop false → report only",
                        in(b -> {
                            b.user = with(llama70b(8), s -> s.rollout.autoRollback.onCrashLoop = false);
                            b.stable = applied(GOOD, GEN - 1, "good");
                            b.failure = failure(FailureSignal.Kind.CrashLoopBackOff, "bad");
                        }),
                        RollbackDecision.Report.class,
                        "onCrashLoop false"),
                new Case(
                        "progress deadline with onProgressDeadline false → report only",
                        in(b -> {
                            b.user = with(llama70b(8), s -> s.rollout.autoRollback.onProgressDeadline = false);
                            b.failure = failure(FailureSignal.Kind.ProgressDeadlineExceeded, "bad");
                        }),
                        RollbackDecision.Report.class,
                        "onProgressDeadline false"),
                new Case(
                        "CUDA OOM, first deployment → lower the fraction",
                        in(b -> b.failure = failure(CUDA, "bad")),
                        RollbackDecision.Remediate.class,
                        "memory.fraction 0.95 -> 0.90"),
                new Case(
                        "OOM on an auto fraction → planner's auto minus a step",
                        in(b -> {
                            b.user = AUTO;
                            b.applied = applied(AUTO, GEN, "bad");
                            b.plannedFraction = 0.94;
                            b.failure = failure(FailureSignal.Kind.OOMKilled, "bad");
                        }),
                        RollbackDecision.Remediate.class,
                        "memory.fraction auto (0.94) -> 0.89"),
                new Case(
                        "second OOM → shrink the allreduce buffer",
                        in(b -> {
                            b.applied = applied(with(llama70b(8), s -> s.memory.fraction = "0.90"), GEN, "r2");
                            b.rollback = status(GEN, 1, "bad", "2026-11-29T11:59:00Z", Action.LowerMemoryFraction);
                            b.failure = failure(CUDA, "r2");
                        }),
                        RollbackDecision.Remediate.class,
                        "allreduce.maxMessageBytes 8388608 -> 4194304"),
                new Case(
                        "third OOM → fall back to NCCL",
                        in(b -> {
                            b.applied =
                                    applied(with(llama70b(8), s -> s.allreduce.maxMessageBytes = 4L << 20), GEN, "r3");
                            b.rollback = status(
                                    GEN, 2, "r2", null, Action.LowerMemoryFraction, Action.ShrinkAllreduceBuffer);
                            b.failure = failure(CUDA, "r3");
                        }),
                        RollbackDecision.Remediate.class,
                        "allreduce.mode Auto -> NCCL"),
                new Case(
                        "OOM with NCCL planned → buffer steps skipped, fraction again",
                        in(b -> {
                            b.plannedAllreduce = Allreduce.NCCL;
                            b.applied = applied(with(llama70b(8), s -> s.memory.fraction = "0.90"), GEN, "r2");
                            b.rollback = status(GEN, 1, "bad", null, Action.LowerMemoryFraction);
                            b.failure = failure(CUDA, "r2");
                        }),
                        RollbackDecision.Remediate.class,
                        "memory.fraction 0.90 -> 0.85"),
                new Case(
                        "attempts exhausted → give up",
                        in(b -> {
                            b.rollback = status(
                                    GEN,
                                    3,
                                    "r3",
                                    null,
                                    Action.LowerMemoryFraction,
                                    Action.ShrinkAllreduceBuffer,
                                    Action.FallBackToNccl);
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.GiveUp.class,
                        "3 of 3 attempts for generation 4 used"),
                new Case(
                        "maxAttempts 0 bounds remediation, not the rollback to a stable spec",
                        in(b -> {
                            b.user = with(llama70b(8), s -> s.rollout.autoRollback.maxAttempts = 0);
                            b.stable = applied(GOOD, GEN - 1, "good");
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.Rollback.class,
                        "revision bad -> good"),
                new Case(
                        "maxAttempts 0 and no stable spec → give up",
                        in(b -> {
                            b.user = with(llama70b(8), s -> s.rollout.autoRollback.maxAttempts = 0);
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.GiveUp.class,
                        "0 of 0 attempts"),
                new Case(
                        "failure of the handled revision → nothing (restart-safe)",
                        in(b -> {
                            b.rollback = status(GEN, 1, "bad", null, Action.LowerMemoryFraction);
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.Nothing.class,
                        "already handled"),
                new Case(
                        "backoff running → wait",
                        in(b -> {
                            b.applied = applied(GOOD, GEN, "r2");
                            b.rollback = status(GEN, 1, "bad", "2026-11-29T12:00:10Z", Action.LowerMemoryFraction);
                            b.failure = failure(CUDA, "r2");
                        }),
                        RollbackDecision.Wait.class,
                        "backoff before attempt 2"),
                new Case(
                        "new generation resets attempts and handled revision",
                        in(b -> {
                            b.rollback = status(
                                    GEN - 1,
                                    3,
                                    "bad",
                                    "2026-11-29T13:00:00Z",
                                    Action.LowerMemoryFraction,
                                    Action.ShrinkAllreduceBuffer,
                                    Action.FallBackToNccl);
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.Remediate.class,
                        "memory.fraction 0.95 -> 0.90"),
                new Case(
                        "disabled → report only",
                        in(b -> {
                            b.user = with(llama70b(8), s -> s.rollout.autoRollback.enabled = false);
                            b.stable = applied(GOOD, GEN - 1, "good");
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.Report.class,
                        "disabled"),
                new Case(
                        "the stable spec itself OOMs → remediate it",
                        in(b -> {
                            b.stable = applied(BAD, GEN, "bad");
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.Remediate.class,
                        "0.95 -> 0.90"),
                new Case(
                        "the stable spec crash-loops without OOM → report",
                        in(b -> {
                            b.stable = applied(BAD, GEN, "bad");
                            b.failure = failure(FailureSignal.Kind.CrashLoopBackOff, "bad");
                        }),
                        RollbackDecision.Report.class,
                        "nothing to roll back to"),
                new Case(
                        "no stable spec and remediate false → give up",
                        in(b -> {
                            b.user = with(llama70b(8), s -> s.rollout.autoRollback.remediate = false);
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.GiveUp.class,
                        "remediate is false"),
                new Case(
                        "fraction at its minimum and NCCL already → give up",
                        in(b -> {
                            b.applied = applied(
                                    with(llama70b(8), s -> {
                                        s.memory.fraction = "0.12";
                                        s.allreduce.mode = AllreduceMode.NCCL;
                                    }),
                                    GEN,
                                    "r9");
                            b.plannedAllreduce = Allreduce.NCCL;
                            b.user = with(llama70b(8), s -> s.rollout.autoRollback.maxAttempts = 20);
                            b.rollback = status(GEN, 9, "r8", null, Action.LowerMemoryFraction);
                            b.failure = failure(CUDA, "r9");
                        }),
                        RollbackDecision.GiveUp.class,
                        "no remediation step left"),
                new Case(
                        "failure of another revision → nothing",
                        in(b -> b.failure = failure(CUDA, "old")),
                        RollbackDecision.Nothing.class,
                        "not the applied revision"),
                new Case(
                        "nothing applied yet → nothing",
                        in(b -> {
                            b.applied = null;
                            b.failure = failure(CUDA, "bad");
                        }),
                        RollbackDecision.Nothing.class,
                        "nothing applied"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(Case c) {
        RollbackDecision d = RollbackDecider.decide(c.input());

        assertThat(d).isInstanceOf(c.expected());
        assertThat(describe(d)).contains(c.detail());
    }

    /** The decision with the status objects written out (they have no toString). */
    static String describe(RollbackDecision d) {
        Object extra = null;
        if (d instanceof RollbackDecision.MarkStable m) {
            extra = m.stable();
        } else if (d instanceof RollbackDecision.Rollback r) {
            extra = r.status();
        } else if (d instanceof RollbackDecision.Remediate r) {
            extra = r.status();
        } else if (d instanceof RollbackDecision.GiveUp g) {
            extra = g.status();
        } else if (d instanceof RollbackDecision.Report r) {
            extra = r.status();
        }
        return d + (extra == null ? "" : " " + io.fabric8.kubernetes.client.utils.Serialization.asJson(extra));
    }

    @Test
    void anActionRecordsTheAttemptBackoffAndHandledRevision() {
        RollbackDecision d = RollbackDecider.decide(in(b -> {
            b.applied = applied(GOOD, GEN, "r2");
            b.rollback = status(GEN, 1, "bad", "2026-11-29T11:59:50Z", Action.LowerMemoryFraction);
            b.failure = failure(CUDA, "r2");
        }));

        RollbackDecision.Remediate r = (RollbackDecision.Remediate) d;
        assertThat(r.status().attempts).isEqualTo(2);
        assertThat(r.status().handledRevision).isEqualTo("r2");
        assertThat(r.status().generation).isEqualTo(GEN);
        assertThat(r.status().notBefore).isEqualTo("2026-11-29T12:00:20Z"); // 10 s × 2^(2−1)
        assertThat(r.status().history)
                .extracting(a -> a.attempt + ":" + a.action)
                .containsExactly("1:LowerMemoryFraction", "2:ShrinkAllreduceBuffer");
        assertThat(r.status().history.get(1).reason).startsWith("CudaOutOfMemory on llama-0: CUDA out of memory");
        assertThat(r.target().allreduce.maxMessageBytes).isEqualTo(4L << 20);
        assertThat(r.target().memory.fraction).isEqualTo("0.90");
    }

    @Test
    void sameInputAfterARestartGivesTheSameDecisionAndItsStatusStopsASecondOne() {
        RollbackInput first = in(b -> {
            b.stable = applied(GOOD, GEN - 1, "good");
            b.failure = failure(CUDA, "bad");
        });
        RollbackDecision.Rollback a = (RollbackDecision.Rollback) RollbackDecider.decide(first);
        RollbackDecision.Rollback again = (RollbackDecision.Rollback) RollbackDecider.decide(first);
        assertThat(again.status().attempts).isEqualTo(a.status().attempts).isEqualTo(1);

        // status written, operator restarted, the old pods still show the OOM
        RollbackDecision after = RollbackDecider.decide(in(b -> {
            b.stable = applied(GOOD, GEN - 1, "good");
            b.rollback = a.status();
            b.failure = failure(CUDA, "bad");
        }));
        assertThat(after).isInstanceOf(RollbackDecision.Nothing.class);
    }

    @Test
    void effectiveSpecKeepsTheOverrideUntilTheUserChangesTheSpec() {
        InferenceDeploymentStatus st = new InferenceDeploymentStatus();
        st.lastAppliedSpec = applied(GOOD, GEN, "good");
        st.rollback = status(GEN, 1, "bad", null, Action.Rollback);

        assertThat(RollbackDecider.effectiveSpec(BAD, GEN, st)).isSameAs(GOOD);
        assertThat(RollbackDecider.effectiveSpec(BAD, GEN + 1, st)).isSameAs(BAD);
        assertThat(RollbackDecider.effectiveSpec(BAD, GEN, new InferenceDeploymentStatus()))
                .isSameAs(BAD);
        assertThat(RollbackDecider.effectiveSpec(BAD, GEN, null)).isSameAs(BAD);
    }

    @Test
    void backoffDoublesAndIsCapped() {
        Duration base = Duration.ofSeconds(10);
        assertThat(List.of(1, 2, 3, 4, 10).stream()
                        .map(n -> RollbackDecider.backoff(base, n).toSeconds())
                        .toList())
                .containsExactly(10L, 20L, 40L, 80L, 600L);
    }
}
