package io.tensorlane.runtime.sched;

/**
 * Guesses the next tokens of a sequence for speculative decoding ({@link Speculator}); the target model then checks
 * all of them in one step. Called on the scheduler thread only.
 */
public interface Proposer {
    /**
     * Writes up to {@code k} proposed next tokens of the sequence {@code tokens[0, length)} (prompt and output so far)
     * into {@code out} and returns how many (0: no guess). Must not change {@code tokens}.
     */
    int propose(int[] tokens, int length, int k, int[] out);
}
