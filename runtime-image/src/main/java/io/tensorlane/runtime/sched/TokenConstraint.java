package io.tensorlane.runtime.sched;

/**
 * What a sequence may generate next (structured outputs, enforced tool calls): before each of the sequence's draws the
 * scheduler passes the tokens generated so far and gets the allowed ids as a bitmask over the vocabulary (bit
 * {@code id % 32} of word {@code id / 32}), which the GPU sampler applies ({@link SamplingRows#mask}). One object per
 * sequence, called on the scheduler thread only; it may keep the state of the tokens it has seen (the generated tokens
 * only grow: preemption recomputes the cache, not the tokens).
 */
public interface TokenConstraint {
    /**
     * The mask for the next draw, given {@code generated[0, count)}, the sequence's generated tokens so far (null: no
     * restriction).
     */
    int[] mask(int[] generated, int offset, int count);
}
