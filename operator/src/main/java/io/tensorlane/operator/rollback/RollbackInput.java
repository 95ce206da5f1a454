package io.tensorlane.operator.rollback;

import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.contract.Allreduce;
import java.time.Duration;
import java.time.Instant;

/**
 * Everything the rollback decision needs; all of it lives in the object's spec/status or is observed, so the
 * decision survives an operator restart.
 *
 * @param generation metadata.generation of the user spec
 * @param userSpec the user's spec (its rollout.autoRollback settings apply)
 * @param lastApplied status.lastAppliedSpec (the effective spec whose revision runs now); null before the first apply
 * @param lastStable status.lastStableSpec; null when none yet
 * @param rollback status.rollback; null when nothing was attempted
 * @param failure the failure on pods of lastApplied's revision, from {@link FailureDetector}; null when none
 * @param allReadySince since when every replica of lastApplied's revision has been Ready; null when not all are
 * @param plannedFraction static fraction of the plan for lastApplied (base for lowering an auto fraction)
 * @param plannedAllreduce allreduce mode of that plan (buffer steps only apply to Custom)
 * @param now the decision time
 * @param backoffBase backoff before attempt n+1 is {@code backoffBase × 2^(n−1)}, capped at 10 minutes
 */
public record RollbackInput(
        long generation,
        InferenceDeploymentSpec userSpec,
        AppliedSpec lastApplied,
        AppliedSpec lastStable,
        RollbackStatus rollback,
        FailureSignal failure,
        Instant allReadySince,
        double plannedFraction,
        Allreduce plannedAllreduce,
        Instant now,
        Duration backoffBase) {

    /** The default backoff base. */
    public static final Duration DEFAULT_BACKOFF = Duration.ofSeconds(10);
}
