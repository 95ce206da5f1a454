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

    private final String basedOn;

    public ChildApplyException(ChildProblem problem, InferenceDeploymentStatus statusAfter, Throwable cause) {
        this(problem, statusAfter, null, cause);
    }

    private ChildApplyException(
            ChildProblem problem, InferenceDeploymentStatus statusAfter, String basedOn, Throwable cause) {
        super(problem.message(), cause);
        this.problem = problem;
        this.statusAfter = statusAfter;
        this.basedOn = basedOn;
    }

    /**
     * This failure, with {@code resourceVersion}: the version of the InferenceDeployment that {@link #statusAfter()}
     * was computed on (the one the reconcile's own status write returned, when it wrote one).
     */
    ChildApplyException basedOn(String resourceVersion) {
        return new ChildApplyException(problem, statusAfter, resourceVersion, getCause());
    }

    /** The resourceVersion {@link #statusAfter()} was computed on; null when not known. */
    String basedOn() {
        return basedOn;
    }

    public ChildProblem problem() {
        return problem;
    }

    /** The status to keep (the revision was applied), or null (report the status from before this reconcile). */
    public InferenceDeploymentStatus statusAfter() {
        return statusAfter;
    }
}
