package io.tensorlane.operator.rollback;

import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.FailureRecord;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import java.time.Duration;

/**
 * The rollback state after one decision, ready for the status, plus what the reconciler must do.
 *
 * @param effective the spec to plan, render and apply now
 * @param newTarget true when {@code effective} changed because of a Rollback or Remediate decision
 * @param failed gave up for this generation: no further Deployment writes
 * @param failureActive a failure is observed on the running revision
 * @param requeue look again after this (backoff / stability window), or null
 */
public record RecoveryStep(
        RollbackDecision decision,
        InferenceDeploymentSpec effective,
        boolean newTarget,
        AppliedSpec lastStable,
        RollbackStatus rollback,
        FailureRecord lastFailure,
        boolean failed,
        boolean failureActive,
        Duration requeue) {}
