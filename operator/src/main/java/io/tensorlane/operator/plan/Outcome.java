package io.tensorlane.operator.plan;

/** Overall result of planning; each non-OK value maps to the condition of the same name in status. */
public enum Outcome {
    /** A node class, an allreduce and a memory plan were found (the plan may still carry warnings). */
    OK,
    /** The spec cannot be served as written (e.g. allreduce.mode Custom where no node has P2P); condition InvalidSpec. */
    INVALID_SPEC,
    /** No node satisfies placement and free GPUs; condition Unschedulable. */
    UNSCHEDULABLE,
    /** The model does not fit into the GPUs of one pod; condition DoesNotFit. */
    DOES_NOT_FIT,
    /** The model's facts are being read from its source; condition Progressing with reason InspectingModel. */
    INSPECTING_MODEL,
    /** The model cannot be read or served (404, 401, malformed config, unsupported architecture); condition ModelUnavailable. */
    MODEL_UNAVAILABLE
}
