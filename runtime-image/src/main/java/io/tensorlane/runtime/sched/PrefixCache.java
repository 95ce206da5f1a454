package io.tensorlane.runtime.sched;

import java.util.List;

/**
 * The scheduler's side of automatic prefix caching over the {@link BlockAllocator} (scheduler thread only). At its
 * admission (also after a preemption) a sequence takes the longest chain of its leading full blocks that the cache
 * holds, at most {@code (length - 1) / blockSize} blocks so that at least its last token is computed and yields logits;
 * the step then feeds only the tokens after them (the attention kernels read the earlier ones through the block table).
 * After every step the blocks a sequence has completely computed are registered under their content hash.
 *
 * <p>Shared blocks are only ever read: a sequence writes K/V only at positions from its {@code computed} on, which lie
 * past every cached block it holds (cached blocks are full, and a sequence takes at most the blocks before its last
 * token). So no copy-on-write is needed.
 *
 * <p>A waiting sequence whose first uncached full block is being computed right now by a running sequence with the same
 * prefix (the other choices of an {@code n > 1} request, users who send the same system prompt at once) is not admitted
 * yet: it waits until that block is computed and registered and then takes it from the cache, instead of computing the
 * same prefix a second time. Only the tokens after the shared full blocks (the partial last block of the prompt, at
 * least one token) are computed per sequence.
 */
final class PrefixCache {
    private final BlockAllocator blocks;
    private final int bs;
    private final boolean enabled;

    PrefixCache(BlockAllocator blocks, boolean enabled) {
        this.blocks = blocks;
        this.bs = blocks.blockSize();
        this.enabled = enabled;
    }

    boolean enabled() {
        return enabled;
    }

    /** How many of {@code s}'s leading full blocks (before its last token) the cache holds; looks, takes nothing. */
    int cachedBlocks(Sequence s) {
        if (!enabled || s.computed != 0 || !s.table.isEmpty()) {
            return 0;
        }
        int max = (s.length - 1) / bs;
        int k = 0;
        while (k < max && find(s, k) >= 0) {
            k++;
        }
        return k;
    }

    private int find(Sequence s, int block) {
        return blocks.lookup(
                s.hashes.get(block, s.tokens, bs), s.hashes.parent(block, s.tokens, bs), s.tokens, block * bs);
    }

    /**
     * Whether {@code s}, whose first {@code cached} blocks are cached, should wait because a running sequence is
     * computing {@code s}'s next full block (same prefix up to and including it) and has not finished it yet.
     */
    boolean shouldWait(Sequence s, int cached, List<Sequence> running) {
        int end = (cached + 1) * bs;
        if (!enabled || end > s.length - 1) {
            return false;
        }
        long h = s.hashes.get(cached, s.tokens, bs);
        for (Sequence r : running) {
            if (r.computed < end && end <= r.length && r.hashes.get(cached, r.tokens, bs) == h) {
                return true;
            }
        }
        return false;
    }

    /** Puts {@code s}'s first {@code cached} cached blocks (just counted by {@link #cachedBlocks}) into its table. */
    void take(Sequence s, int cached) {
        for (int i = 0; i < cached; i++) {
            int b = find(s, i);
            if (b < 0) {
                throw new IllegalStateException("cached KV block " + i + " of " + s + " vanished while admitting it");
            }
            blocks.take(b);
            s.table.add(b);
        }
        s.computed = cached * bs;
        s.registered = cached;
    }

    /**
     * Drops {@code s}'s blocks and sends it back to the start (a preemption, or an admission that did not fit after
     * {@link #take}): blocks already registered stay cached until evicted, so a recompute takes them back.
     */
    void release(Sequence s) {
        blocks.release(s.table);
        s.computed = 0;
        s.registered = 0;
    }

    /** After a step: registers the blocks of {@code s} that are now full and computed. */
    void registerComputed(Sequence s) {
        if (!enabled) {
            return;
        }
        int full = Math.min(s.computed / bs, s.table.size());
        for (; s.registered < full; s.registered++) {
            int i = s.registered;
            blocks.register(
                    s.table.get(i), s.hashes.get(i, s.tokens, bs), s.hashes.parent(i, s.tokens, bs), s.tokens, i * bs);
        }
    }
}
