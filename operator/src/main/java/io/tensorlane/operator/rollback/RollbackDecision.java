package io.tensorlane.operator.rollback;

import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import java.time.Instant;

/**
 * What to do about the current rollout. Decisions that change {@code status.rollback} carry the new value: the
 * reconciler writes it (with lastAppliedSpec / lastFailure) to status BEFORE applying the Deployment, so a restart
 * between the two re-applies the same target instead of handling the failure twice.
 */
public sealed interface RollbackDecision {

    /** Nothing to do. */
    record Nothing(String why) implements RollbackDecision {}

    /** A failure must be handled but backoff is running; requeue at {@code until}. */
    record Wait(Instant until, String why) implements RollbackDecision {}

    /** The applied spec has been Ready for the stability window: copy it to status.lastStableSpec. */
    record MarkStable(AppliedSpec stable) implements RollbackDecision {}

    /**
     * Record the failure (status.lastFailure, Degraded, an event) and change nothing: automatic rollback is disabled,
     * the signal is configured not to trigger, or there is nothing better to go to.
     */
    record Report(FailureSignal failure, String why, RollbackStatus status) implements RollbackDecision {}

    /** Apply {@code target} (the stable effective spec); condition RolledBack=True, event Rollback, phase RolledBack. */
    record Rollback(InferenceDeploymentSpec target, FailureSignal failure, String reason, RollbackStatus status)
            implements RollbackDecision {}

    /**
     * Apply {@code target}: the failed effective spec with one remediation step; event Remediated, phase Remediating.
     *
     * @param action LowerMemoryFraction, ShrinkAllreduceBuffer or FallBackToNccl
     * @param change e.g. "memory.fraction 0.95 -> 0.90"
     */
    record Remediate(
            RollbackStatus.Action action,
            String change,
            InferenceDeploymentSpec target,
            FailureSignal failure,
            RollbackStatus status)
            implements RollbackDecision {}

    /** Attempts exhausted or no step left: phase Failed, conditions RollbackFailed/Degraded; stop changing the Deployment. */
    record GiveUp(String message, FailureSignal failure, RollbackStatus status) implements RollbackDecision {}
}
