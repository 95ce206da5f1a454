package io.tensorlane.runtime.sched;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The paged KV cache's block bookkeeping on the host (one for all ranks: every rank holds the same blocks of its own
 * heads). Blocks are handed out lowest-index first and returned when a sequence finishes. Not thread-safe: the
 * scheduler thread owns it.
 */
public final class BlockAllocator {
    private final int blocks;
    private final int blockSize;
    private final Deque<Integer> free = new ArrayDeque<>();

    public BlockAllocator(int blocks, int blockSize) {
        if (blocks < 1 || blockSize < 1) {
            throw new IllegalArgumentException("need blocks >= 1 and blockSize >= 1, got " + blocks + ", " + blockSize);
        }
        this.blocks = blocks;
        this.blockSize = blockSize;
        for (int i = 0; i < blocks; i++) {
            free.addLast(i);
        }
    }

    public int blocks() {
        return blocks;
    }

    public int blockSize() {
        return blockSize;
    }

    public int freeBlocks() {
        return free.size();
    }

    /** Fraction of blocks in use, 0..1. */
    public double usage() {
        return (blocks - free.size()) / (double) blocks;
    }

    /** Blocks needed to hold {@code tokens} tokens. */
    public int blocksFor(long tokens) {
        return Math.toIntExact((tokens + blockSize - 1) / blockSize);
    }

    /** Whether {@code n} more blocks can be taken. */
    public boolean canAllocate(int n) {
        return n <= free.size();
    }

    /** Takes {@code n} blocks, or throws when fewer are free (callers check {@link #canAllocate} first). */
    public List<Integer> allocate(int n) {
        if (n < 0 || n > free.size()) {
            throw new IllegalStateException(
                    "cannot allocate " + n + " KV blocks: " + free.size() + " of " + blocks + " free");
        }
        List<Integer> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            out.add(free.pollFirst());
        }
        return out;
    }

    /** Grows {@code table} so it holds {@code tokens} tokens; false (and unchanged) when not enough blocks are free. */
    public boolean ensure(List<Integer> table, long tokens) {
        int need = blocksFor(tokens) - table.size();
        if (need <= 0) {
            return true;
        }
        if (!canAllocate(need)) {
            return false;
        }
        table.addAll(allocate(need));
        return true;
    }

    /** Returns blocks to the free list. */
    public void release(List<Integer> table) {
        for (int b : table) {
            if (b < 0 || b >= blocks) {
                throw new IllegalArgumentException(
                        "block " + b + " is not a block of this cache (0.." + (blocks - 1) + ")");
            }
            free.addFirst(b);
        }
        table.clear();
    }
}
