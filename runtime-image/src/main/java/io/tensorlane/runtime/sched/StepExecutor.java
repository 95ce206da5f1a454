package io.tensorlane.runtime.sched;

/**
 * What the {@link Scheduler} drives: one forward pass of a mixed batch (prefill chunks and decode tokens). Implemented
 * by {@code io.tensorlane.runtime.llm.LlmEngine}; tests use a CPU fake. Called from the scheduler thread only.
 */
public interface StepExecutor {
    /** Runs {@code batch}; the result has the greedy token of every logits row, and the rows' logits when asked. */
    StepResult step(StepBatch batch, boolean wantLogits);

    /**
     * Greedy steps of one sequence in a chain: {@code first} (its last token's logits asked), then {@code more}
     * one-token steps, step j fed the greedy id of step j - 1 at the position after it; the {@code more + 1} greedy ids
     * (the id after {@code first}'s last token first). Step j's batch is {@code next.batch(id, j)}, for j = 1..more. The
     * default runs them one at a time through {@link #step}; the GPU engine may run them with one read-back at the end
     * (the same ids: the draft model's guesses, {@link DraftProposer}).
     */
    default int[] chain(StepBatch first, int more, ChainStep next) {
        int[] ids = new int[more + 1];
        int[] r = step(first, false).ids();
        ids[0] = r[r.length - 1];
        for (int j = 1; j <= more; j++) {
            int[] s = step(next.batch(ids[j - 1], j), false).ids();
            ids[j] = s[s.length - 1];
        }
        return ids;
    }

    /** Step j of a {@link #chain}: a one-token step of {@code token}. */
    @FunctionalInterface
    interface ChainStep {
        StepBatch batch(int token, int j);
    }

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
