package io.tensorlane.runtime.cli;

import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepBatch.Logits;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * prefixcheck's computations on the GPU, through the engine's own step (what the scheduler feeds it with the prefix
 * cache on). A prompt P = prefix + tail, with k full blocks in the prefix:
 *
 * <ol>
 *   <li>writer: prefix + another tail, prefilled in two chunks (the boundary inside a block), the first in one step
 *       with the control's writer (the prefix shifted by one token); its first k blocks are the "cached" blocks;
 *   <li>fresh: P prefilled in one step from position 0, logits at every position;
 *   <li>cached: a table of the writer's k blocks and new ones, only P's tokens after them computed (at least the partial
 *       last block), logits at every position computed;
 *   <li>control: the same with block k/2 taken from the shifted writer (the KV of other tokens at those positions: an
 *       off-by-one in the block bookkeeping), which the comparison must report as a mismatch;
 *   <li>one-token remainder: P cut one token after the cached blocks, fresh in one step, and on the cached blocks twice
 *       (a one-token step: the decode kernels; the second replays the CUDA graph the first captured).
 * </ol>
 *
 * Then every rank's K and V of every layer are read back and compared position by position with the fresh run's
 * ({@link KvDiff}, groups of one block per rank, layer and K/V), as are the logits of every position computed on the
 * cached blocks. A MoE model's layers after its first MoE layer (and its logits) are gated only where the routing dump
 * ({@link RoutingRecords}) shows both computations routed alike.
 */
final class PrefixCheckRun {
    /** One verdict: {@code expectMatch} false for the negative control; an ungated row is reported only. */
    record Row(String check, String positions, KvDiff.Stat stat, boolean expectMatch, boolean gated) {
        boolean pass(double tol) {
            return !gated || stat.within(tol) == expectMatch;
        }
    }

    private final PrefixCheckTarget engine;
    private final BlockAllocator alloc;
    private final int bs;
    private final int layers;
    private final int tp;
    private final int vocab;
    /** Elements of one slot of one rank's K (or V) of one layer: its KV heads x head dim. */
    private final int width;

    /** Leading layers whose KV no MoE router touches: every layer of a dense model, through the first MoE layer. */
    private final int routingFree;

    private final List<List<Integer>> owned = new ArrayList<>();

    PrefixCheckRun(PrefixCheckTarget engine) {
        this.engine = engine;
        this.alloc = engine.blocks();
        this.bs = alloc.blockSize();
        this.layers = engine.layers();
        this.tp = engine.tp();
        this.vocab = engine.vocab();
        this.routingFree = engine.routingFree();
        this.width = engine.width();
    }

    /**
     * The leading layers whose K/V depend on no MoE router: layer l's K/V depend on the MLPs of layers before it, so
     * every layer through the first MoE layer (all of a dense model).
     */
    static int routingFree(ModelConfig c) {
        for (int l = 0; l < c.numLayers(); l++) {
            if (c.isMoe(l)) {
                return l + 1;
            }
        }
        return c.numLayers();
    }

    /** KV blocks the check takes for a prefix and tail of these lengths. */
    static int blocksNeeded(int prefix, int tail, int bs) {
        int total = prefix + tail;
        int k = prefix / bs;
        int per = (total + bs - 1) / bs;
        return per /* writer */
                + (prefix + bs - 1) / bs /* shifted */
                + per /* fresh */
                + 2 * (per - k)
                + (k * bs + bs) / bs /* fresh, one-token case */
                + 2;
    }

    /** The steps {@link #run} takes (the routing dump's last records are theirs). */
    static final int STEPS = 8;

    /**
     * Runs the computations and compares them; every block taken is given back. {@code routing}: the MoE routing dump's
     * steps once the check's have run (null: no dump), read only for a MoE model.
     */
    List<Row> run(int prefixTokens, int tailTokens, long seed, Supplier<List<RoutingRecords.Step>> routing) {
        try {
            return rows(prefixTokens, tailTokens, seed, routing);
        } finally {
            owned.forEach(alloc::release);
            owned.clear();
        }
    }

    private List<Row> rows(int prefixTokens, int tailTokens, long seed, Supplier<List<RoutingRecords.Step>> routing) {
        Random rnd = new Random(seed);
        int[] p0 = ids(rnd, prefixTokens);
        int[] p = concat(p0, ids(rnd, tailTokens));
        int[] q = concat(p0, ids(rnd, tailTokens));
        int[] shifted = concat(Arrays.copyOfRange(p0, 1, prefixTokens), ids(rnd, 1));
        int k = prefixTokens / bs;
        int cached = k * bs;
        int j = k / 2;
        int[] pb = Arrays.copyOf(p, cached + 1);

        // 1. the writer of the cached blocks, and of the control's shifted block
        List<Integer> w = own(blocks(q.length));
        List<Integer> x = own(blocks(shifted.length));
        int c1 = j * bs + bs / 2;
        step(builder().add(w, slice(q, 0, c1), 0, Logits.NONE).add(x, shifted, 0, Logits.LAST));
        step(builder().add(w, slice(q, c1, q.length), c1, Logits.LAST));
        // 2. fresh, 3. cached, 4. control
        List<Integer> f = own(blocks(p.length));
        float[] fLogits = step(builder().add(f, p, 0, Logits.ALL));
        List<Integer> c = onCached(w, k, blocks(p.length) - k);
        float[] cLogits = step(builder().add(c, slice(p, cached, p.length), cached, Logits.ALL));
        List<Integer> n = onCached(w, k, blocks(p.length) - k);
        n.set(j, x.get(j));
        float[] nLogits = step(builder().add(n, slice(p, cached, p.length), cached, Logits.ALL));
        // 5. the one-token remainder: fresh, then on the cached blocks twice (eager, then the graph replayed)
        List<Integer> fb = own(blocks(pb.length));
        float[] fbLogits = step(builder().add(fb, pb, 0, Logits.ALL));
        List<Integer> cb1 = onCached(w, k, 1);
        float[] cb1Logits = step(builder().add(cb1, new int[] {pb[cached]}, cached, Logits.LAST));
        List<Integer> cb2 = onCached(w, k, 1);
        float[] cb2Logits = step(builder().add(cb2, new int[] {pb[cached]}, cached, Logits.LAST));

        // MoE: (token, layer) pairs routed differently (null: unknown); the writer's prefix in its two steps
        Integer[] flips = new Integer[5];
        List<RoutingRecords.Step> rs = routingFree < layers ? routing.get() : null;
        if (rs != null && rs.size() >= STEPS) {
            List<RoutingRecords.At> at = new ArrayList<>();
            for (RoutingRecords.Step st : rs.subList(rs.size() - STEPS, rs.size())) {
                at.add(new RoutingRecords.At(st, 0));
            }
            List<RoutingRecords.At> writer = at.subList(0, 2);
            int pre = RoutingRecords.differing(writer, at.subList(2, 3), 0, cached);
            int preB = RoutingRecords.differing(writer, at.subList(5, 6), 0, cached);
            flips[0] = pre;
            flips[1] = pre + RoutingRecords.differing(at.subList(2, 3), at.subList(3, 4), cached, p.length);
            flips[2] = preB;
            for (int i = 0; i < 2; i++) {
                flips[3 + i] =
                        preB + RoutingRecords.differing(at.subList(5, 6), at.subList(6 + i, 7 + i), cached, cached + 1);
            }
        }

        float[][][] sf = snapshot(f, p.length);
        float[][][] sc = snapshot(c, p.length);
        float[][][] sn = snapshot(n, p.length);
        float[][][] sfb = snapshot(fb, pb.length);
        String pre = "0.." + (cached - 1);
        String cont = cached + ".." + (p.length - 1);
        int rest = p.length - cached;
        List<Row> rows = new ArrayList<>();
        kvRows(rows, "prefix KV: cached blocks vs fresh", pre, sc, sf, 0, cached, flips[0]);
        kvRows(rows, "continuation KV on cached vs fresh", cont, sc, sf, cached, p.length, flips[1]);
        rows.add(new Row(
                "continuation logits on cached vs fresh" + routed(flips[1]),
                cont,
                logits(cLogits, 0, fLogits, cached, rest),
                true,
                gate(flips[1])));
        kvRows(rows, "one-token rest: prefix KV vs fresh", pre, snapshot(cb1, cached + 1), sfb, 0, cached, flips[2]);
        for (int i = 0; i < 2; i++) {
            float[][][] s = snapshot(i == 0 ? cb1 : cb2, cached + 1);
            String how = i == 0 ? " (eager)" : " (graph replay)";
            kvRows(rows, "one-token rest: KV vs fresh" + how, "" + cached, s, sfb, cached, cached + 1, flips[3 + i]);
            rows.add(new Row(
                    "one-token rest: logits vs fresh" + how + routed(flips[3 + i]),
                    "" + cached,
                    logits(i == 0 ? cb1Logits : cb2Logits, 0, fbLogits, cached, 1),
                    true,
                    gate(flips[3 + i])));
        }
        String blk = "block " + j + " (" + j * bs + ".." + ((j + 1) * bs - 1) + ") shifted";
        rows.add(new Row(
                "control: prefix KV, " + blk + " (must mismatch)" + layerNote(0, routingFree),
                pre,
                kv(sn, sf, 0, cached, 0, routingFree),
                false,
                true));
        rows.add(new Row(
                "control: continuation KV (info)", cont, kv(sn, sf, cached, p.length, 0, layers), false, false));
        rows.add(new Row(
                "control: continuation logits (info)", cont, logits(nLogits, 0, fLogits, cached, rest), false, false));
        return rows;
    }

    private StepBatch.Builder builder() {
        return new StepBatch.Builder(bs, engine.maxBlocksPerSeq());
    }

    /** Runs the step (logits wanted) and returns its logits rows. */
    private float[] step(StepBatch.Builder b) {
        return engine.step(b.build(), true).logits();
    }

    private int blocks(int tokens) {
        return (tokens + bs - 1) / bs;
    }

    /** {@code n} new blocks, given back at the end. */
    private List<Integer> own(int n) {
        if (!alloc.canAllocate(n)) {
            throw new IllegalStateException("the KV cache has " + alloc.freeBlocks() + " free blocks, the check needs "
                    + n + " more: give a larger --kv-cache-tokens");
        }
        List<Integer> t = new ArrayList<>(alloc.allocate(n));
        owned.add(t);
        return new ArrayList<>(t);
    }

    /** A table of the writer's first {@code k} blocks followed by {@code more} new ones. */
    private List<Integer> onCached(List<Integer> writer, int k, int more) {
        List<Integer> t = new ArrayList<>(writer.subList(0, k));
        t.addAll(own(more));
        return t;
    }

    /**
     * Every rank's K and V of every layer over the blocks holding positions [0, len) of {@code table}:
     * [rank][layer * 2 + (V ? 1 : 0)][slot * width + e], slots in table order.
     */
    private float[][][] snapshot(List<Integer> table, int len) {
        int[] ids = table.subList(0, blocks(len)).stream()
                .mapToInt(Integer::intValue)
                .toArray();
        float[][][] out = new float[tp][2 * layers][];
        for (int r = 0; r < tp; r++) {
            for (int l = 0; l < layers; l++) {
                for (int v = 0; v < 2; v++) {
                    float[] kv = engine.readKv(r, l, v == 1, ids);
                    if (kv.length != ids.length * bs * width) {
                        throw new IllegalStateException("rank " + r + " layer " + l + ": read " + kv.length
                                + " KV elements, expected " + ids.length * bs * width);
                    }
                    out[r][2 * l + v] = kv;
                }
            }
        }
        return out;
    }

    /**
     * The rows comparing positions [from, to) of two snapshots: one over every layer for a dense model; for a MoE model
     * one over the layers no router touches (gated) and one over the rest, gated only where the two computations routed
     * every token the KV depends on alike ({@code flips} 0): a router near-tie that rounding tips the other way sends a
     * token to another expert, a discrete change no tolerance covers, so then the row is reported only.
     */
    private void kvRows(
            List<Row> rows, String check, String pos, float[][][] a, float[][][] b, int from, int to, Integer flips) {
        rows.add(new Row(check + layerNote(0, routingFree), pos, kv(a, b, from, to, 0, routingFree), true, true));
        if (routingFree < layers) {
            rows.add(new Row(
                    check + layerNote(routingFree, layers) + routed(flips),
                    pos,
                    kv(a, b, from, to, routingFree, layers),
                    true,
                    gate(flips)));
        }
    }

    /**
     * Whether a comparison that depends on MoE routing is gated: always for a dense model; for a MoE model where both
     * computations routed every token alike ({@code flips} 0; null: unknown, no routing dump).
     */
    private boolean gate(Integer flips) {
        return routingFree == layers || (flips != null && flips == 0);
    }

    /** What a row after MoE routing says about it. */
    private String routed(Integer flips) {
        if (routingFree == layers) {
            return "";
        }
        if (flips == null) {
            return " (info: no routing dump)";
        }
        return flips == 0 ? " (routing identical)" : " (info: routing differs at " + flips + " token-layer pairs)";
    }

    /** " (layers lo..hi-1)" when a model's layers are split, else nothing. */
    private String layerNote(int lo, int hi) {
        return routingFree == layers ? "" : " (layers " + lo + ".." + (hi - 1) + ")";
    }

    /** Positions [from, to) of two snapshots over layers [lo, hi), one group per rank, layer, K/V and block. */
    private KvDiff.Stat kv(float[][][] a, float[][][] b, int from, int to, int lo, int hi) {
        KvDiff d = new KvDiff();
        for (int r = 0; r < tp; r++) {
            for (int m = 2 * lo; m < 2 * hi; m++) {
                float[] x = a[r][m];
                float[] y = b[r][m];
                for (int g = from / bs; g * bs < to; g++) {
                    int p0 = Math.max(from, g * bs);
                    int p1 = Math.min(to, (g + 1) * bs);
                    String name = "rank " + r + " layer " + m / 2 + (m % 2 == 0 ? " K" : " V") + " block " + g;
                    d.add(name, x, p0 * width, y, p0 * width, (p1 - p0) * width);
                }
            }
        }
        return d.stat();
    }

    /** {@code rows} logits rows of {@code a} from {@code aRow} against {@code b}'s from {@code bRow}, a group each. */
    private KvDiff.Stat logits(float[] a, int aRow, float[] b, int bRow, int rows) {
        KvDiff d = new KvDiff();
        for (int i = 0; i < rows; i++) {
            d.add("position " + (bRow + i), a, (aRow + i) * vocab, b, (bRow + i) * vocab, vocab);
        }
        return d.stat();
    }

    /** {@code n} random token ids, none of the first three (the oracle's special tokens). */
    private int[] ids(Random rnd, int n) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = 3 + rnd.nextInt(vocab - 3);
        }
        return out;
    }

    private static int[] slice(int[] a, int from, int to) {
        return Arrays.copyOfRange(a, from, to);
    }

    private static int[] concat(int[] a, int[] b) {
        int[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
