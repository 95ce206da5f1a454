package io.tensorlane.runtime.sched;

/**
 * Guesses the next tokens of sequences for speculative decoding ({@link Speculator}); the target model then checks
 * all of them in one step. A proposer makes one {@link Session} per sequence, which may keep what it learned of that
 * sequence's tokens between steps (the n-gram index of {@link NgramProposer}, later a draft model's KV cache). Called
 * on the scheduler thread only.
 */
public interface Proposer {
    /** Starts proposing for one sequence of at most {@code capacity} tokens (prompt + {@code max_tokens}). */
    Session open(int capacity);

    /** One sequence's proposer state; dropped with the sequence. */
    interface Session {
        /**
         * Writes up to {@code k} proposed next tokens of the sequence {@code tokens[0, length)} (prompt and output so
         * far) into {@code out} and returns how many (0: no guess). Must not change {@code tokens}. A session may rely
         * on the sequence changing only at its end: each call's {@code tokens} agree with the previous call's on
         * {@code [0, min of the two lengths)} (the scheduler's sequences only grow; a shorter length is a cut).
         */
        int propose(int[] tokens, int length, int k, int[] out);

        /**
         * {@link #propose}, the guesses drawn (by {@code rng}) from the proposer's own next-token distributions at
         * {@code temperature}, row i of which, over the target's {@code vocab} ids, goes to {@code q[i * vocab, (i + 1) *
         * vocab)} for the rejection rule ({@link SpecSampling}); -1 when the proposer has no distributions (its guesses
         * are point masses, checked by equal draws: {@link #propose}). The default.
         */
        default int proposeSampled(
                int[] tokens,
                int length,
                int k,
                int[] out,
                double temperature,
                java.util.random.RandomGenerator rng,
                double[] q,
                int vocab) {
            return -1;
        }

        /**
         * The sequence {@code tokens[0, length)} is still being prefilled, its first guess some steps away: the
         * session may get ready for it, doing a bounded amount of work per call (the same rule as {@link #propose}
         * for what may change between calls). Nothing by default.
         */
        default void prepare(int[] tokens, int length) {}

        /** The sequence ended: give back what the session holds (a draft model's KV blocks). Nothing by default. */
        default void close() {}
    }
}
