package io.tensorlane.runtime.sched;

/**
 * The host reference of the GPU sampler's penalty arithmetic (tl_sample_f32 in tl_sample.cuh), bit for bit: each step
 * is one IEEE fp32 operation rounded to nearest, in vLLM v1's order (bias and bans, then repetition, frequency,
 * presence).
 */
public final class PenaltyReference {
    private PenaltyReference() {}

    /** Rewrites {@code logits[off, off + vocab)} as the sampler does for a row with penalty {@code p}. */
    public static void apply(float[] logits, int off, int vocab, RowPenalty p) {
        int[] e = p.pairs();
        for (int j = 0; j < p.biasPairs(); j++) {
            int id = e[2 * j];
            if (id >= 0 && id < vocab) {
                logits[off + id] = logits[off + id] + Float.intBitsToFloat(e[2 * j + 1]);
            }
        }
        for (int j = p.biasPairs(); j < p.entries(); j++) {
            int id = e[2 * j];
            if (id >= 0 && id < vocab) {
                logits[off + id] = penalize(logits[off + id], e[2 * j + 1], p);
            }
        }
    }

    /** One count pair: the logit {@code v} of an id seen in the prompt or output, generated {@code count} times. */
    public static float penalize(float v, int count, RowPenalty p) {
        v = v > 0f ? v / p.repetition() : v * p.repetition();
        v = v - p.frequency() * (float) count;
        if (count > 0) {
            v = v - p.presence();
        }
        return v;
    }
}
