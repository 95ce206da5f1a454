package io.tensorlane.operator.rollback;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;

/** The rollback / remediation state machine as a pure function. */
public final class RollbackDecider {
  private RollbackDecider() {
  }

  /** Decides what to do; see {@link RollbackDecision}. */
  public static RollbackDecision decide(RollbackInput in) {
    throw new UnsupportedOperationException("in progress");
  }

  /**
   * The spec to plan and render now: the user's spec, unless a rollback/remediation was applied for this very
   * generation (then status.lastAppliedSpec, so the failed spec is not re-applied until the user changes the spec).
   */
  public static InferenceDeploymentSpec effectiveSpec(InferenceDeploymentSpec user, long generation,
      InferenceDeploymentStatus status) {
    throw new UnsupportedOperationException("in progress");
  }
}
