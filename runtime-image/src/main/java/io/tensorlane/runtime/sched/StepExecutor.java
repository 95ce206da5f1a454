package io.tensorlane.runtime.sched;

/**
 * What the {@link Scheduler} drives: one forward pass of a mixed batch (prefill chunks and decode tokens). Implemented
 * by {@code io.tensorlane.runtime.llm.LlmEngine}; tests use a CPU fake. Called from the scheduler thread only.
 */
public interface StepExecutor {
    /** Runs {@code batch}; the result has the greedy token of every logits row, and the rows' logits when asked. */
    StepResult step(StepBatch batch, boolean wantLogits);

    /** Size of the logits rows (the model's vocabulary). */
    int vocabSize();

    /**
     * Whether a failure of {@link #step} leaves the executor unusable. The default is yes for everything: after a failed
     * step of the GPU engine the KV cache may be half-written and the ranks out of step (an allreduce timeout, a CUDA
     * error), so the scheduler stops serving and {@link Scheduler#failure()} turns health unready.
     */
    default boolean isFatal(Throwable failure) {
        return true;
    }
}
