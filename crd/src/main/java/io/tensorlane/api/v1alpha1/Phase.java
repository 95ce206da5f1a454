package io.tensorlane.api.v1alpha1;

/** Lifecycle phase of an InferenceDeployment, shown in `kubectl get infd`. */
public enum Phase {
    /** Accepted, not yet planned. */
    Pending,
    /** Plan applied, pods rolling out. */
    Progressing,
    /** Every replica Ready on the current revision. */
    Ready,
    /** Running with fewer Ready replicas than asked, or a failure being handled. */
    Degraded,
    /** A failed spec was replaced by the last stable spec. */
    RolledBack,
    /** An automatic remediation step is rolling out. */
    Remediating,
    /** Remediation attempts exhausted or rollback impossible; the operator stopped changing the Deployment. */
    Failed,
    /** The spec cannot be served as written (InvalidSpec). */
    Invalid,
    /** No node satisfies the placement. */
    Unschedulable,
    /** The model does not fit into the GPUs of one pod. */
    DoesNotFit
}
