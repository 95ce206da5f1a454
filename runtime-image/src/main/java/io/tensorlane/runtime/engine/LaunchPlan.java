package io.tensorlane.runtime.engine;

import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;

/** Pure launch arithmetic (grid sizes), kept apart from CUDA calls so it can be tested on a CPU. */
public final class LaunchPlan {
    private LaunchPlan() {}

    /**
     * The most blocks one rank may launch. Ranks sharing a device (virtual ranks) must all be resident at once,
     * or a block spinning at a barrier could wait for a block that cannot be scheduled: so the device's resident
     * capacity is split between them.
     */
    public static int maxBlocks(int layoutBlocks, int residentBlocksPerSm, int multiprocessors, int ranksOnDevice) {
        if (residentBlocksPerSm < 1 || multiprocessors < 1 || ranksOnDevice < 1) {
            throw new IllegalArgumentException("need residentBlocksPerSm, multiprocessors and ranksOnDevice >= 1, got "
                    + residentBlocksPerSm + ", " + multiprocessors + ", " + ranksOnDevice);
        }
        int capacity = residentBlocksPerSm * multiprocessors / ranksOnDevice;
        if (capacity < 1) {
            throw new IllegalArgumentException(ranksOnDevice + " ranks cannot be co-resident on a device with "
                    + multiprocessors + " multiprocessors x " + residentBlocksPerSm + " blocks");
        }
        return Math.min(layoutBlocks, capacity);
    }

    /** Blocks for one call: enough for one 16-byte vector per thread, at least 1, at most {@code maxBlocks}. */
    public static int blocksFor(long count, DType dtype, int maxBlocks) {
        long vectors = (count + dtype.elementsPerVector() - 1) / dtype.elementsPerVector();
        long wanted = (vectors + BufferLayout.THREADS_PER_BLOCK - 1) / BufferLayout.THREADS_PER_BLOCK;
        return (int) Math.max(1, Math.min(maxBlocks, wanted));
    }
}
