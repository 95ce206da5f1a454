package io.tensorlane.operator.rollback;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.api.v1alpha1.RolloutSpec.AutoRollbackSpec;
import io.tensorlane.operator.plan.SpecValidator;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The rollback / remediation state machine as a pure function (README, "Rollback"). All state lives in status, so
 * the same input after an operator restart gives the same decision, and a failure of a handled revision is not
 * handled twice.
 */
public final class RollbackDecider {
    /** Backoff is capped here. */
    public static final Duration MAX_BACKOFF = Duration.ofMinutes(10);

    private RollbackDecider() {}

    /** Decides what to do; see {@link RollbackDecision}. */
    public static RollbackDecision decide(RollbackInput in) {
        AutoRollbackSpec auto = SpecValidator.withDefaults(in.userSpec()).rollout.autoRollback;
        AppliedSpec applied = in.lastApplied();
        FailureSignal f = in.failure();
        if (applied == null || applied.spec == null) {
            return new RollbackDecision.Nothing("nothing applied yet");
        }
        if (f == null) {
            return withoutFailure(in, applied);
        }
        if (!Objects.equals(f.revision(), applied.revision)) {
            return new RollbackDecision.Nothing(
                    "failure of revision " + f.revision() + " is not the applied revision " + applied.revision);
        }
        RollbackStatus rb = in.rollback();
        boolean sameGen = rb != null && Objects.equals(rb.generation, in.generation());
        if (sameGen && Objects.equals(rb.handledRevision, f.revision())) {
            return new RollbackDecision.Nothing("failure of revision " + f.revision() + " was already handled");
        }
        int attempts = sameGen && rb.attempts != null ? rb.attempts : 0;
        if (!auto.enabled) {
            return new RollbackDecision.Report(f, "autoRollback is disabled", handled(in, sameGen, f));
        }
        if (f.kind() == FailureSignal.Kind.CrashLoopBackOff && !auto.onCrashLoop) {
            return new RollbackDecision.Report(
                    f,
                    "CrashLoopBackOff does not trigger rollback (autoRollback.onCrashLoop " + "false)",
                    handled(in, sameGen, f));
        }
        if (f.kind() == FailureSignal.Kind.ProgressDeadlineExceeded && !auto.onProgressDeadline) {
            return new RollbackDecision.Report(
                    f,
                    "ProgressDeadlineExceeded does not trigger rollback " + "(autoRollback.onProgressDeadline false)",
                    handled(in, sameGen, f));
        }
        Instant notBefore = sameGen ? parseOrNull(rb.notBefore) : null;
        if (notBefore != null && in.now().isBefore(notBefore)) {
            return new RollbackDecision.Wait(notBefore, "backoff before attempt " + (attempts + 1));
        }
        AppliedSpec stable = in.lastStable();
        String reason = f.kind() + (f.pod() == null ? "" : " on " + f.pod()) + ": " + f.message();
        if (stable != null && stable.spec != null && !sameSpec(stable, applied)) {
            RollbackStatus ns = attempt(
                    in,
                    sameGen,
                    f,
                    Action.Rollback,
                    "revision " + applied.revision + " -> " + stable.revision + " (last stable, generation "
                            + stable.generation + ")",
                    reason);
            return new RollbackDecision.Rollback(stable.spec, f, reason, ns);
        }
        if (stable != null && !f.kind().oom()) {
            return new RollbackDecision.Report(
                    f,
                    "the failing spec is the last stable one and the failure is not an OOM; "
                            + "nothing to roll back to",
                    handled(in, sameGen, f));
        }
        if (attempts >= auto.maxAttempts) {
            return new RollbackDecision.GiveUp(
                    attempts + " of " + auto.maxAttempts + " attempts for generation " + in.generation()
                            + " used; last failure " + reason,
                    f,
                    handled(in, sameGen, f));
        }
        if (!auto.remediate) {
            return new RollbackDecision.GiveUp(
                    "no other stable spec to roll back to and autoRollback.remediate is false; " + "last failure "
                            + reason,
                    f,
                    handled(in, sameGen, f));
        }
        List<Action> done = sameGen && rb.history != null
                ? rb.history.stream().map(a -> a.action).toList()
                : List.of();
        Optional<Remediation.Step> step =
                Remediation.next(applied.spec, done, in.plannedFraction(), in.plannedAllreduce());
        if (step.isEmpty()) {
            return new RollbackDecision.GiveUp(
                    "no remediation step left (memory fraction at its minimum, allreduce on " + "NCCL); last failure "
                            + reason,
                    f,
                    handled(in, sameGen, f));
        }
        Remediation.Step s = step.get();
        return new RollbackDecision.Remediate(
                s.action(), s.change(), s.spec(), f, attempt(in, sameGen, f, s.action(), s.change(), reason));
    }

    private static RollbackDecision withoutFailure(RollbackInput in, AppliedSpec applied) {
        if (in.allReadySince() == null) {
            return new RollbackDecision.Nothing("not every replica is Ready");
        }
        AppliedSpec stable = in.lastStable();
        if (stable != null && Objects.equals(stable.revision, applied.revision) && sameSpec(stable, applied)) {
            return new RollbackDecision.Nothing("the applied spec is already the stable one");
        }
        Integer window = SpecValidator.withDefaults(applied.spec).rollout.stabilityWindowSeconds;
        Instant stableAt = in.allReadySince().plusSeconds(window);
        if (in.now().isBefore(stableAt)) {
            return new RollbackDecision.Wait(
                    stableAt, "every replica Ready since " + in.allReadySince() + "; stable after " + window + " s");
        }
        AppliedSpec s = new AppliedSpec();
        s.generation = applied.generation;
        s.revision = applied.revision;
        s.time = in.now().toString();
        s.spec = applied.spec;
        return new RollbackDecision.MarkStable(s);
    }

    /**
     * The spec to plan and render now: the user's spec, unless a rollback or remediation was applied for this very
     * generation (then status.lastAppliedSpec, so the failed spec is not re-applied until the user changes the spec).
     */
    public static InferenceDeploymentSpec effectiveSpec(
            InferenceDeploymentSpec user, long generation, InferenceDeploymentStatus status) {
        if (status == null
                || status.rollback == null
                || status.lastAppliedSpec == null
                || status.lastAppliedSpec.spec == null) {
            return user;
        }
        RollbackStatus rb = status.rollback;
        boolean overridden = Objects.equals(rb.generation, generation)
                && rb.attempts != null
                && rb.attempts > 0
                && Objects.equals(status.lastAppliedSpec.generation, generation);
        return overridden ? status.lastAppliedSpec.spec : user;
    }

    /** The AppliedSpec to write to status before applying {@code revision} rendered from {@code spec}. */
    public static AppliedSpec applied(InferenceDeploymentSpec spec, long generation, String revision, Instant now) {
        AppliedSpec a = new AppliedSpec();
        a.generation = generation;
        a.revision = revision;
        a.time = now.toString();
        a.spec = spec;
        return a;
    }

    /** Backoff before the attempt after {@code attemptsMade}: base × 2^(attemptsMade − 1), at most {@link #MAX_BACKOFF}. */
    static Duration backoff(Duration base, int attemptsMade) {
        Duration d = base.multipliedBy(1L << Math.min(20, Math.max(0, attemptsMade - 1)));
        return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
    }

    private static Instant parseOrNull(String rfc3339) {
        try {
            return rfc3339 == null ? null : Instant.parse(rfc3339);
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    private static boolean sameSpec(AppliedSpec a, AppliedSpec b) {
        return Serialization.asJson(SpecValidator.withDefaults(a.spec))
                .equals(Serialization.asJson(SpecValidator.withDefaults(b.spec)));
    }

    /** A copy of the status for this generation (a fresh one when the generation changed). */
    private static RollbackStatus base(RollbackInput in, boolean sameGen) {
        RollbackStatus ns = new RollbackStatus();
        ns.generation = in.generation();
        if (sameGen) {
            RollbackStatus rb = in.rollback();
            ns.attempts = rb.attempts;
            ns.handledRevision = rb.handledRevision;
            ns.notBefore = rb.notBefore;
            ns.history = rb.history == null ? new ArrayList<>() : new ArrayList<>(rb.history);
        } else {
            ns.attempts = 0;
        }
        return ns;
    }

    private static RollbackStatus handled(RollbackInput in, boolean sameGen, FailureSignal f) {
        RollbackStatus ns = base(in, sameGen);
        ns.handledRevision = f.revision();
        return ns;
    }

    private static RollbackStatus attempt(
            RollbackInput in, boolean sameGen, FailureSignal f, Action action, String change, String reason) {
        RollbackStatus ns = handled(in, sameGen, f);
        ns.attempts = ns.attempts + 1;
        Duration base = in.backoffBase() == null ? RollbackInput.DEFAULT_BACKOFF : in.backoffBase();
        ns.notBefore = in.now().plus(backoff(base, ns.attempts)).toString();
        RollbackStatus.Attempt a = new RollbackStatus.Attempt();
        a.attempt = ns.attempts;
        a.time = in.now().toString();
        a.action = action;
        a.change = change;
        a.reason = FailureDetector.trim(reason);
        ns.history.add(a);
        return ns;
    }
}
