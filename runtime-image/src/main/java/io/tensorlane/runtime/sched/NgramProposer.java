package io.tensorlane.runtime.sched;

/**
 * Prompt lookup (n-gram) speculation, as vLLM's {@code ngram} method: find the longest suffix of the sequence, of
 * {@code n} tokens down to 1, that occurred earlier in the prompt and output, and propose the up to {@code k} tokens
 * that followed its latest earlier occurrence. No model, so its guess is a point mass: sampling each verified row with
 * the ordinary sampler and accepting while the draw equals the guess keeps the output distribution exactly
 * ({@link SpecRule}). Each sequence gets an {@link NgramIndex}, updated as its tokens grow, so that a proposal costs
 * O(n + k) whatever the context length (its memory: {@link NgramIndex}).
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

    /** The longest suffix matched. */
    public int n() {
        return n;
    }

    @Override
    public Session open(int capacity) {
        return new NgramIndex(n, capacity);
    }
}
