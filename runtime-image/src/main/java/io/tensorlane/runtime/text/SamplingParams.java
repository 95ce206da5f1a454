package io.tensorlane.runtime.text;

/**
 * How the next token is drawn from the logits (see {@link Sampler#sample}).
 *
 * @param temperature 0 for greedy (argmax); else logits are divided by it. Finite, at least 0.
 * @param topP nucleus sampling: keep the most probable tokens up to this cumulative probability; 1 is off. In (0, 1].
 * @param topK keep the k most probable tokens; 0 or -1 is off. Stored as given.
 * @param minP drop tokens whose probability is below minP times the largest one; 0 is off. In [0, 1].
 * @param seed seed of the sequence's random generator ({@link Sampler#rngFor}); the same seed draws the same tokens
 */
public record SamplingParams(float temperature, float topP, int topK, float minP, long seed) {
    public SamplingParams {
        if (!Float.isFinite(temperature) || temperature < 0) {
            throw new IllegalArgumentException(
                    "temperature must be a finite number >= 0 (0 = greedy), got " + temperature);
        }
        if (!(topP > 0 && topP <= 1)) {
            throw new IllegalArgumentException("top_p must be in (0, 1] (1 = off), got " + topP);
        }
        if (topK < -1) {
            throw new IllegalArgumentException("top_k must be >= 0 (0 or -1 = off), got " + topK);
        }
        if (!(minP >= 0 && minP <= 1)) {
            throw new IllegalArgumentException("min_p must be in [0, 1] (0 = off), got " + minP);
        }
    }

    /** Argmax decoding: temperature 0, no filters, seed 0. */
    public static SamplingParams greedy() {
        return new SamplingParams(0f, 1f, 0, 0f, 0L);
    }

    public boolean isGreedy() {
        return temperature == 0f || topK == 1;
    }

    /** The top-k limit, or 0 when off. */
    public int effectiveTopK() {
        return topK <= 0 ? 0 : topK;
    }

    public SamplingParams withSeed(long newSeed) {
        return new SamplingParams(temperature, topP, topK, minP, newSeed);
    }
}
