package io.tensorlane.runtime.llm;

/**
 * What one forward pass does with the CUDA graphs of decode and verify steps (StepRunner): run eagerly or replay a bucket's graph, time the
 * allreduces of an eager run, capture the bucket's graphs. A pure decision, apart from the CUDA calls.
 *
 * <p>Captures happen only after an eager run of the same step, when every rank's stream has finished: then no
 * allreduce of any rank is in flight, so a capture that waits for the context to go idle (instantiation, upload) cannot
 * wait for a peer's replay spinning for this rank (see {@code CapturedGraph}). That is why the timed graph (rank 0's
 * with event-record nodes around its allreduces, for the sampled steps) is captured together with the plain one, never
 * at the sampled step that first needs it.
 *
 * @param run how the pass runs
 * @param timeEager an eager run whose allreduces rank 0 times (a sampled step with no graph to replay)
 * @param capturePlain capture the bucket's graph after the eager run
 * @param captureTimed capture the bucket's timed graph after the eager run, too
 */
record GraphPlan(Run run, boolean timeEager, boolean capturePlain, boolean captureTimed) {
    /** How the pass runs. */
    enum Run {
        EAGER,
        REPLAY_PLAIN,
        REPLAY_TIMED
    }

    /**
     * @param decode the step can replay a graph (graphs on, a shape {@link GraphBuckets} gives a graph)
     * @param hasPlain the bucket's graph exists
     * @param hasTimed the bucket's timed graph exists
     * @param sample this step's allreduces are timed
     * @param timingPossible allreduces can be timed at all (several ranks, the driver timed every sample so far)
     */
    static GraphPlan of(boolean decode, boolean hasPlain, boolean hasTimed, boolean sample, boolean timingPossible) {
        if (decode && hasPlain) {
            return new GraphPlan(sample && hasTimed ? Run.REPLAY_TIMED : Run.REPLAY_PLAIN, false, false, false);
        }
        return new GraphPlan(Run.EAGER, sample, decode, decode && timingPossible);
    }

    boolean replays() {
        return run != Run.EAGER;
    }
}
