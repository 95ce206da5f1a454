package io.tensorlane.operator.reconcile;

import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.operator.status.ChildProblem;

/**
 * A child's apply failed after the dry-run passed (a transient failure, or the server changed its mind). Carries the
 * problem for the condition, and the status that is true after the failure: the status written before the apply
 * when the Deployment (the revision) was applied, or null when it was not, so the error-status hook never reports a
 * revision that was not applied.
 */
public final class ChildApplyException extends RuntimeException {
    private final transient ChildProblem problem;
    private final transient InferenceDeploymentStatus statusAfter;

    public ChildApplyException(ChildProblem problem, InferenceDeploymentStatus statusAfter, Throwable cause) {
        super(problem.message(), cause);
        this.problem = problem;
        this.statusAfter = statusAfter;
    }

    public ChildProblem problem() {
        return problem;
    }

    /** The status to keep (the revision was applied), or null (report the status from before this reconcile). */
    public InferenceDeploymentStatus statusAfter() {
        return statusAfter;
    }
}
