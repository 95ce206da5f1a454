package io.tensorlane.runtime.sched;

/**
 * One logits row's penalty entries as the GPU sampler reads them (tl_sample.cuh): {@code pairs} holds (id, value) int32
 * pairs, first {@code biasPairs} bias pairs (value: fp32 bits added to the logit; -inf bans the id), then count pairs,
 * one per id seen in the prompt or the output (value: the id's count among the generated tokens).
 */
public record RowPenalty(float presence, float frequency, float repetition, int[] pairs, int biasPairs) {
    public RowPenalty {
        if (pairs.length % 2 != 0 || biasPairs < 0 || 2 * biasPairs > pairs.length) {
            throw new IllegalArgumentException(pairs.length + " ints, " + biasPairs + " bias pairs");
        }
    }

    /** Pairs in all. */
    public int entries() {
        return pairs.length / 2;
    }

    /** Count pairs. */
    public int countPairs() {
        return entries() - biasPairs;
    }
}
