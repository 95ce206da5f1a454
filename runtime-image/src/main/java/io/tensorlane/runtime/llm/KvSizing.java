package io.tensorlane.runtime.llm;

/**
 * How {@link LlmEngine#load} sizes its KV cache, and the pure arithmetic of it ({@link #blocks}).
 *
 * <ul>
 *   <li>{@link #OWN}: from the options (their KV tokens, else what the memory fraction leaves on the fullest GPU);
 *   <li>{@link #LATER}: no KV cache at load; the caller gives its size afterwards ({@link LlmEngine#allocateKv}) — a
 *       draft model, whose weights and activations are on the GPU before the target sizes its cache, so that the
 *       target sees them as taken;
 *   <li>{@link #beside}: as {@link #OWN}, with another cache beside this one's on rank 0's GPU that holds as many tokens
 *       as this one (the draft model's: {@code bytesPerBlock} per block of this engine's block size): the blocks are
 *       what the fraction leaves for both.
 * </ul>
 *
 * @param deferred      no KV cache at load ({@link #LATER})
 * @param besidePerBlock bytes per block of the cache beside this one's on rank 0's GPU (0: none)
 */
public record KvSizing(boolean deferred, long besidePerBlock) {
    public static final KvSizing OWN = new KvSizing(false, 0);
    public static final KvSizing LATER = new KvSizing(true, 0);

    public KvSizing {
        if (besidePerBlock < 0 || (deferred && besidePerBlock > 0)) {
            throw new IllegalArgumentException(
                    "KV sizing: bytes beside per block must be >= 0 and only for a cache sized at load");
        }
    }

    /** A cache sized at load beside another of {@code bytesPerBlock} bytes per block on rank 0's GPU. */
    public static KvSizing beside(long bytesPerBlock) {
        return new KvSizing(false, bytesPerBlock);
    }

    /**
     * The blocks that fit on every GPU: for GPU {@code i} (of the distinct GPUs, the first one rank 0's), {@code
     * budgets[i]} bytes left to the KV cache, {@code ranksOn[i]} ranks holding {@code perBlock} bytes a block each, and
     * on the first GPU {@code besidePerBlock} more bytes a block; the least over the GPUs (0 for a budget < 0).
     */
    static int blocks(long[] budgets, int[] ranksOn, long perBlock, long besidePerBlock) {
        if (budgets.length == 0 || budgets.length != ranksOn.length || perBlock <= 0) {
            throw new IllegalArgumentException(
                    "KV sizing needs a budget and a rank count per GPU, and bytes per block");
        }
        long best = Long.MAX_VALUE;
        for (int i = 0; i < budgets.length; i++) {
            long per = Math.addExact(Math.multiplyExact(ranksOn[i], perBlock), i == 0 ? besidePerBlock : 0);
            best = Math.min(best, Math.max(0, budgets[i]) / per);
        }
        return (int) Math.min(Integer.MAX_VALUE, best);
    }
}
