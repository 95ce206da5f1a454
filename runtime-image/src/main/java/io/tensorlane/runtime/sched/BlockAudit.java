package io.tensorlane.runtime.sched;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * A self-audit of the {@link BlockAllocator} against the block tables of the live sequences (a debug switch runs it
 * after every step: {@link SchedulerConfig#blockAudit()}, serve's {@code --kv-audit}). Pure: it reads the allocator and
 * the tables and returns what is wrong, changing nothing. It checks that
 *
 * <ul>
 *   <li>every block's reference count is the number of tables that hold it (a table holds a block at most once), so a
 *       block some sequence still reads is never free ("nothing freed while read") and none is held by nobody ("no
 *       leak");
 *   <li>the blocks split exactly into held (count &gt; 0), free (count 0, unregistered, on the free list once) and
 *       evictable (count 0, registered, on the LRU list once);
 *   <li>the content map and the blocks agree: each registered block is in the map under its own hash, nothing else is;
 *   <li>every sequence reads its own tokens: a registered block at index {@code i} of a table lies inside the tokens
 *       the sequence has computed, holds that sequence's token ids {@code [i * blockSize, (i + 1) * blockSize)}, and is
 *       registered under the hash and parent hash of that sequence's chain.
 * </ul>
 */
final class BlockAudit {
    /** Problems beyond this many are counted, not described. */
    static final int MAX_LISTED = 8;

    /** One holder of blocks: a sequence's table, its tokens (the first {@code computed} in the KV) and hash chain. */
    record Holder(String id, List<Integer> table, int[] tokens, int computed, BlockHashes hashes) {
        static Holder of(Sequence s) {
            return new Holder(s.req.id(), s.table, s.tokens, s.computed, s.hashes);
        }
    }

    private BlockAudit() {}

    /** {@link #check(BlockAllocator, List)} over the scheduler's running and waiting sequences. */
    static List<String> check(BlockAllocator blocks, Collection<Sequence> running, Collection<Sequence> waiting) {
        List<Holder> holders = new ArrayList<>();
        running.forEach(s -> holders.add(Holder.of(s)));
        waiting.forEach(s -> holders.add(Holder.of(s)));
        return check(blocks, holders);
    }

    /** What is wrong with {@code blocks} given these holders (empty: consistent). */
    static List<String> check(BlockAllocator blocks, List<Holder> holders) {
        List<String> out = new ArrayList<>();
        int n = blocks.blocks();
        int bs = blocks.blockSize();
        int[] holds = new int[n];
        for (Holder h : holders) {
            BitSet mine = new BitSet(n);
            for (int i = 0; i < h.table().size(); i++) {
                int b = h.table().get(i);
                if (b < 0 || b >= n) {
                    out.add(h.id() + " holds block " + b + ", not a block of this cache (0.." + (n - 1) + ")");
                    continue;
                }
                if (mine.get(b)) {
                    out.add(h.id() + " holds block " + b + " twice");
                }
                mine.set(b);
                holds[b]++;
                if (blocks.isCached(b)) {
                    content(blocks, h, i, b, bs, out);
                }
            }
        }
        BitSet listed = new BitSet(n);
        for (int b : blocks.freeList()) {
            listed(b, "free", listed, out);
            if (blocks.isCached(b)) {
                out.add("block " + b + " is on the free list but registered");
            }
        }
        for (int b : blocks.evictableList()) {
            listed(b, "evictable", listed, out);
            if (!blocks.isCached(b)) {
                out.add("block " + b + " is evictable but not registered");
            }
        }
        int registered = 0;
        for (int b = 0; b < n; b++) {
            int refs = blocks.refCount(b);
            if (refs != holds[b]) {
                out.add("block " + b + " has " + refs + " references, " + holds[b] + " tables hold it"
                        + (refs == 0 ? " (freed while read)" : holds[b] == 0 ? " (leaked)" : ""));
            }
            if ((refs == 0) != listed.get(b)) {
                out.add("block " + b + " with " + refs + " references is " + (listed.get(b) ? "" : "not ")
                        + "on a free list");
            }
            if (blocks.isCached(b)) {
                registered++;
                Integer at = blocks.cachedMap().get(blocks.hashOf(b));
                if (at == null || at != b) {
                    out.add("registered block " + b + " is not in the content map under its hash");
                }
            }
        }
        if (registered != blocks.cachedMap().size()) {
            out.add(blocks.cachedMap().size() + " entries in the content map, " + registered + " registered blocks");
        }
        for (Map.Entry<Long, Integer> e : blocks.cachedMap().entrySet()) {
            if (!blocks.isCached(e.getValue())) {
                out.add("the content map names block " + e.getValue() + ", which is not registered");
            }
        }
        return out;
    }

    private static void listed(int b, String list, BitSet listed, List<String> out) {
        if (listed.get(b)) {
            out.add("block " + b + " is on the free lists twice (" + list + ")");
        }
        listed.set(b);
    }

    /** Registered block {@code b} at index {@code i} of {@code h}'s table: it must be {@code h}'s own content. */
    private static void content(BlockAllocator blocks, Holder h, int i, int b, int bs, List<String> out) {
        int end = (i + 1) * bs;
        if (h.computed() < end) {
            out.add(h.id() + " holds registered block " + b + " at index " + i + " but has computed only "
                    + h.computed() + " tokens");
            return;
        }
        if (!blocks.holdsTokens(b, h.tokens(), i * bs)) {
            out.add(h.id() + " reads block " + b + " at index " + i + ", which holds other tokens");
        } else if (blocks.hashOf(b) != h.hashes().get(i, h.tokens(), bs)
                || blocks.parentOf(b) != h.hashes().parent(i, h.tokens(), bs)) {
            out.add(h.id() + " reads block " + b + " at index " + i + ", registered under another prefix's hash");
        }
    }

    /** The problems as one message: the first {@link #MAX_LISTED}, then how many more. */
    static String describe(List<String> problems) {
        StringBuilder sb = new StringBuilder("KV block audit failed: ");
        for (int i = 0; i < Math.min(MAX_LISTED, problems.size()); i++) {
            sb.append(i == 0 ? "" : "; ").append(problems.get(i));
        }
        if (problems.size() > MAX_LISTED) {
            sb.append("; and ").append(problems.size() - MAX_LISTED).append(" more");
        }
        return sb.toString();
    }
}
