package io.tensorlane.runtime.sched;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The paged KV cache's block bookkeeping on the host (one for all ranks: every rank holds the same blocks of its own
 * heads), content-addressed for the prefix cache. Not thread-safe: the scheduler thread owns it.
 *
 * <p>Every block has a reference count: the block tables that hold it. A block at count 0 is free. A full block whose
 * KV has been computed can be {@link #register registered} under its content hash ({@link BlockHashes}); it keeps
 * that hash after its last reference goes, as an evictable block, so that a later sequence with the same prefix can
 * {@link #take} it instead of recomputing it. {@link #allocate} hands out never-registered free blocks first, then
 * evicts the least recently released cached block (its hash is forgotten). Evictable blocks count as free in
 * {@link #freeBlocks} and {@link #usage}, as vLLM counts them. Without registrations this is a plain free list.
 *
 * <p>{@link #release} drops a table's references last block first, so that a sequence's evictable blocks are evicted
 * tail first: a chain's later blocks are useless once an earlier one is gone, its head is what other prompts share.
 */
public final class BlockAllocator {
    private final int blocks;
    private final int blockSize;
    private final int[] refs;
    private final boolean[] hashed;
    private final long[] hashOf;
    private final long[] parentOf;
    private final int[] tokensOf;
    /** Free blocks that hold no registered content. */
    private final Deque<Integer> free = new ArrayDeque<>();
    /** Free blocks that are still registered, least recently released first. */
    private final LinkedHashSet<Integer> evictable = new LinkedHashSet<>();

    private final Map<Long, Integer> cached = new HashMap<>();
    private long evictions;

    public BlockAllocator(int blocks, int blockSize) {
        if (blocks < 1 || blockSize < 1) {
            throw new IllegalArgumentException("need blocks >= 1 and blockSize >= 1, got " + blocks + ", " + blockSize);
        }
        this.blocks = blocks;
        this.blockSize = blockSize;
        this.refs = new int[blocks];
        this.hashed = new boolean[blocks];
        this.hashOf = new long[blocks];
        this.parentOf = new long[blocks];
        this.tokensOf = new int[Math.multiplyExact(blocks, blockSize)];
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

    /** Blocks no table holds: never registered, or cached and evictable. */
    public int freeBlocks() {
        return free.size() + evictable.size();
    }

    /** Blocks registered under a content hash (held by tables or evictable). */
    public int cachedBlocks() {
        return cached.size();
    }

    /** Cached blocks evicted so far to make room. */
    public long evictions() {
        return evictions;
    }

    /** How many block tables hold {@code block}. */
    public int refCount(int block) {
        check(block);
        return refs[block];
    }

    /** Fraction of blocks held by tables, 0..1 (evictable cached blocks count as free). */
    public double usage() {
        return (blocks - freeBlocks()) / (double) blocks;
    }

    /** Blocks needed to hold {@code tokens} tokens. */
    public int blocksFor(long tokens) {
        return Math.toIntExact((tokens + blockSize - 1) / blockSize);
    }

    /** Whether {@code n} more blocks can be taken. */
    public boolean canAllocate(int n) {
        return n <= freeBlocks();
    }

    /**
     * Takes {@code n} blocks (one reference each), evicting cached ones when the uncached are gone, or throws when fewer
     * are free (callers check {@link #canAllocate} first).
     */
    public List<Integer> allocate(int n) {
        if (n < 0 || n > freeBlocks()) {
            throw new IllegalStateException(
                    "cannot allocate " + n + " KV blocks: " + freeBlocks() + " of " + blocks + " free");
        }
        List<Integer> out = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int b = free.isEmpty() ? evictOldest() : free.pollFirst();
            refs[b] = 1;
            out.add(b);
        }
        return out;
    }

    private int evictOldest() {
        Iterator<Integer> it = evictable.iterator();
        int b = it.next();
        it.remove();
        cached.remove(hashOf[b]);
        hashed[b] = false;
        evictions++;
        return b;
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

    /**
     * Drops the table's references, last block first, and clears it. A block nobody holds any more becomes free; a
     * registered one stays cached (evictable, most recently released).
     */
    public void release(List<Integer> table) {
        for (int i = table.size() - 1; i >= 0; i--) {
            int b = table.get(i);
            check(b);
            if (refs[b] == 0) {
                throw new IllegalStateException("KV block " + b + " released more often than taken");
            }
            if (--refs[b] == 0) {
                if (hashed[b]) {
                    evictable.add(b);
                } else {
                    free.addFirst(b);
                }
            }
        }
        table.clear();
    }

    /**
     * Shrinks {@code table} to the blocks that hold {@code tokens} tokens, dropping the references of the blocks past them
     * last first (a verify step's rejected guesses: their KV slots are position-addressed, so only whole blocks past the
     * kept tokens are given back; slots of rejected tokens in a kept block are overwritten when those positions are
     * computed again). The dropped blocks must not be registered (a registered block is full and computed, so it lies
     * before {@code tokens}).
     */
    public void truncate(List<Integer> table, long tokens) {
        int keep = blocksFor(tokens);
        if (keep >= table.size()) {
            return;
        }
        List<Integer> tail = new ArrayList<>(table.subList(keep, table.size()));
        for (int b : tail) {
            if (hashed[b] && refs[b] > 0) {
                throw new IllegalStateException("KV block " + b + " past " + tokens + " tokens is cached");
            }
        }
        release(tail);
        table.subList(keep, table.size()).clear();
    }

    /**
     * The cached block registered under {@code hash} whose parent hash and {@code blockSize} token ids from {@code from}
     * are these, or -1. Changes nothing.
     */
    public int lookup(long hash, long parent, int[] tokens, int from) {
        Integer b = cached.get(hash);
        if (b == null || parentOf[b] != parent) {
            return -1;
        }
        return holdsTokens(b, tokens, from) ? b : -1;
    }

    /** One more reference to a cached block (from {@link #lookup}): it is no longer evictable. */
    public void take(int block) {
        check(block);
        if (!hashed[block]) {
            throw new IllegalStateException("KV block " + block + " is not cached");
        }
        if (refs[block]++ == 0) {
            evictable.remove(block);
        }
    }

    /**
     * Registers a held, full block whose KV is computed under its content hash; false when another block already holds
     * that content (it stays the cached one; this block stays plain and is freed as usual) or this one is registered.
     */
    public boolean register(int block, long hash, long parent, int[] tokens, int from) {
        check(block);
        if (refs[block] == 0) {
            throw new IllegalStateException("KV block " + block + " registered while free");
        }
        if (hashed[block] || cached.containsKey(hash)) {
            return false;
        }
        hashed[block] = true;
        hashOf[block] = hash;
        parentOf[block] = parent;
        System.arraycopy(tokens, from, tokensOf, block * blockSize, blockSize);
        cached.put(hash, block);
        return true;
    }

    /** Whether {@code block} is registered (held or evictable). */
    public boolean isCached(int block) {
        check(block);
        return hashed[block];
    }

    // --- views for BlockAudit (scheduler thread) ---

    /** The never-registered free blocks, in hand-out order. */
    Iterable<Integer> freeList() {
        return free;
    }

    /** The free blocks still registered, least recently released first. */
    Iterable<Integer> evictableList() {
        return evictable;
    }

    /** Content hash to registered block. */
    Map<Long, Integer> cachedMap() {
        return java.util.Collections.unmodifiableMap(cached);
    }

    /** The hash {@code block} is registered under (meaningful only while {@link #isCached}). */
    long hashOf(int block) {
        check(block);
        return hashOf[block];
    }

    /** The parent hash {@code block} was registered with (meaningful only while {@link #isCached}). */
    long parentOf(int block) {
        check(block);
        return parentOf[block];
    }

    /** Whether registered {@code block}'s token ids are {@code tokens[from, from + blockSize)}. */
    boolean holdsTokens(int block, int[] tokens, int from) {
        check(block);
        return Arrays.equals(tokensOf, block * blockSize, (block + 1) * blockSize, tokens, from, from + blockSize);
    }

    private void check(int b) {
        if (b < 0 || b >= blocks) {
            throw new IllegalArgumentException(
                    "block " + b + " is not a block of this cache (0.." + (blocks - 1) + ")");
        }
    }
}
