package io.tensorlane.runtime.llm;

/**
 * The split-key attention kernel's arithmetic: query heads per block, key slices per launch, and the layout of the
 * workspace its slices meet in (the fused combine's counters, then the slices' records). Pure functions of the launch
 * (never of the context length), so a captured decode graph stays right as its sequences grow.
 */
public final class AttentionSlices {
    /** Blocks that keep an H200 (132 SMs) busy: two per SM. */
    static final int SPLIT_TARGET_BLOCKS = 264;

    static final int MAX_SPLITS = 32;

    private AttentionSlices() {}

    /**
     * Query heads per block of the split-key kernel: the largest of 4, 2, 1 that divides the group (query heads per kv
     * head) with at most 8 x 8 accumulators per lane (group x head_dim / 64 <= 8); 0 when the head dim is not 64, 128 or
     * 256 and the per-head kernel runs.
     */
    static int splitGroup(int group, int hd) {
        if (hd % 64 != 0 || hd > 256) {
            return 0;
        }
        int nv = hd / 64;
        for (int gh : new int[] {4, 2, 1}) {
            if (group % gh == 0 && gh * nv <= 8) {
                return gh;
            }
        }
        return 0;
    }

    /**
     * Key slices per token: enough blocks to fill the GPU ({@value #SPLIT_TARGET_BLOCKS}) when the batch alone does not, at
     * most {@value #MAX_SPLITS}. A function of the launch only (never of the context length), so a decode graph captured
     * for a batch size stays right as its sequences grow.
     */
    static int splits(int n, int blocksPerToken) {
        long blocks = (long) n * blocksPerToken;
        if (blocks >= SPLIT_TARGET_BLOCKS) {
            return 1;
        }
        return (int) Math.min(MAX_SPLITS, (SPLIT_TARGET_BLOCKS + blocks - 1) / blocks);
    }

    /**
     * The head of the attention workspace: the fused combine's counters, one int a block of a launch with slices (fewer
     * than {@value #SPLIT_TARGET_BLOCKS}), a multiple of 16 bytes. They must be zero before the first launch (the last
     * block of each group resets its counter), so the workspace is allocated zeroed; the slices follow them.
     */
    public static final long TICKETS_BYTES = 4L * SPLIT_TARGET_BLOCKS;

    /**
     * Bytes of the attention workspace for any batch: {@link #TICKETS_BYTES}, then the slices (the largest n x hq x
     * slices x (hd + 2) floats over n with slices > 1); 0 where no launch splits.
     */
    public static long workspaceBytes(int hq, int hk, int hd) {
        long slices = slicesBytes(hq, hk, hd);
        return slices == 0 ? 0 : TICKETS_BYTES + slices;
    }

    private static long slicesBytes(int hq, int hk, int hd) {
        int gh = splitGroup(hq / hk, hd);
        if (gh == 0) {
            return 0;
        }
        long max = 0;
        for (int n = 1; (long) n * (hq / gh) < SPLIT_TARGET_BLOCKS; n++) {
            max = Math.max(max, (long) n * hq * splits(n, hq / gh) * (hd + 2) * 4L);
        }
        return max;
    }
}
