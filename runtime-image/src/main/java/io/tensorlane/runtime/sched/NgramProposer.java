package io.tensorlane.runtime.sched;

/**
 * Prompt lookup (n-gram) speculation, as vLLM's {@code ngram} method: find the longest suffix of the sequence, of
 * {@code n} tokens down to 1, that occurred earlier in the prompt and output, and propose the up to {@code k} tokens
 * that followed its latest earlier occurrence. No model, so its guess is a point mass: sampling each verified row with
 * the ordinary sampler and accepting while the draw equals the guess keeps the output distribution exactly
 * ({@link SpecRule}). Pure and cheap: O(length x n) per call.
 */
public final class NgramProposer implements Proposer {
    private final int n;

    /** Matches suffixes of at most {@code n} tokens (1..{@link SpeculativeConfig#MAX_N}). */
    public NgramProposer(int n) {
        if (n < 1 || n > SpeculativeConfig.MAX_N) {
            throw new IllegalArgumentException("n-gram size must be 1.." + SpeculativeConfig.MAX_N + ", got " + n);
        }
        this.n = n;
    }

    @Override
    public int propose(int[] tokens, int length, int k, int[] out) {
        if (k <= 0 || length < 2) {
            return 0;
        }
        for (int size = Math.min(n, length - 1); size >= 1; size--) {
            int suffix = length - size;
            // latest earlier occurrence: start positions before the suffix itself, the most recent first
            for (int start = suffix - 1; start >= 0; start--) {
                if (matches(tokens, start, suffix, size)) {
                    int from = start + size;
                    int count = Math.min(k, length - from);
                    System.arraycopy(tokens, from, out, 0, count);
                    return count;
                }
            }
        }
        return 0;
    }

    private static boolean matches(int[] t, int a, int b, int size) {
        for (int i = 0; i < size; i++) {
            if (t[a + i] != t[b + i]) {
                return false;
            }
        }
        return true;
    }
}
