package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.f;
import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.DType;
import jcuda.Pointer;
import jcuda.driver.CUstream;

/**
 * The attention launches of {@link ModelKernels}: the tensor-core kernel over query tiles, the split-key kernel over
 * key slices with its combine kernel (or with the rope and the KV write folded in, {@link #launchWithRope}), and the
 * per-head kernel for other head dims; the slices' arithmetic is {@link AttentionSlices}. Launches go through the owning
 * {@link ModelKernels} (its module, its closed check).
 */
public final class AttentionKernels {
    static final int ATTENTION_THREADS = 128;
    static final int SPLIT_THREADS = 128;
    static final int PREFILL_THREADS = 128;
    /**
     * {@code fused}: the last block of each query head group's key slices merges them ({@code tl_attn_split} with its
     * tickets, one kernel fewer a layer); {@code kernel} (unset): the combine kernel does. Built 2026-12-04, not yet run on
     * a GPU; kernelcheck's attention cases compare the two bit for bit.
     */
    public static final String COMBINE_ENV = "TENSORLANE_ATTN_COMBINE";

    /**
     * {@code fused}: a one-token step's attention computes its own q, k and v rows from the qkv projection and writes
     * the key and value to the cache ({@code tl_attn_rope_*}, {@link #launchWithRope}), one kernel fewer a layer;
     * {@code kernel} (unset): {@code tl_qkv_rope} does, then the attention. Built 2026-12-05, not yet run on a GPU;
     * kernelcheck's attention_rope cases compare the two bit for bit (output and cache).
     */
    public static final String ROPE_ENV = "TENSORLANE_ATTN_ROPE";

    private final ModelKernels k;
    private boolean fusedCombine;
    private boolean fusedRope;

    AttentionKernels(ModelKernels k, boolean fusedCombine, boolean fusedRope) {
        this.k = k;
        this.fusedCombine = fusedCombine;
        this.fusedRope = fusedRope;
    }

    /** {@value #COMBINE_ENV}'s value: true for {@code fused}, false for {@code kernel} (also unset or blank). */
    static boolean fusedCombine(String value) {
        return fused(COMBINE_ENV, value, "the combine kernel");
    }

    /** {@value #ROPE_ENV}'s value: true for {@code fused}, false for {@code kernel} (also unset or blank). */
    static boolean fusedRope(String value) {
        return fused(ROPE_ENV, value, "tl_qkv_rope before the attention");
    }

    private static boolean fused(String env, String value, String kernel) {
        if (value == null || value.isBlank()) {
            return false;
        }
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "fused" -> true;
            case "kernel" -> false;
            default ->
                throw new IllegalArgumentException(env + "='" + value + "': expected kernel (" + kernel + ") or fused");
        };
    }

    /** Whether the key slices are merged by their last block ({@link #COMBINE_ENV}). */
    public boolean fusedCombine() {
        return fusedCombine;
    }

    /** Sets {@link #fusedCombine()} for the launches that follow (kernelcheck compares the two). */
    public void fusedCombine(boolean on) {
        fusedCombine = on;
    }

    /** Whether one-token steps take {@link #launchWithRope} ({@link #ROPE_ENV}). */
    public boolean fusedRope() {
        return fusedRope;
    }

    /** Sets {@link #fusedRope()} (kernelcheck and the bench compare the two). */
    public void fusedRope(boolean on) {
        fusedRope = on;
    }

    /**
     * What {@code tl_qkv_rope} reads, for {@link #launchWithRope}: the qkv projection [n, hq + 2 hk, hd], its bias and
     * the per-head q/k norm weights (0: none), the RoPE tables and the tokens' cache slots (slot &lt; 0: not written).
     */
    public record Rope(long qkv, long bias, long qNorm, long kNorm, float eps, long cos, long sin, long slots) {}

    /** {@link ModelKernels#attention}. */
    void launch(
            DType t,
            long q,
            long kCache,
            long vCache,
            long blockTables,
            long tokenSeq,
            long tokenPos,
            int maxBlocksPerSeq,
            int blockSize,
            long out,
            long workspace,
            long tiles,
            int numTiles,
            long rest,
            int numRest,
            int n,
            int hq,
            int hk,
            int hd,
            float scale,
            long kvScales,
            CUstream s) {
        checkLaunch(hq, hk, hd, blockSize, maxBlocksPerSeq, kCache, vCache);
        if (n <= 0) {
            return;
        }
        long list = 0;
        int count = n;
        if (numTiles > 0) {
            if (!AttentionPlan.tiledHeadDim(hd) || tiles == 0 || (numRest > 0 && rest == 0)) {
                throw new IllegalArgumentException("attention: " + numTiles
                        + " query tiles need head dim 64 or 128 (got " + hd + ") and device tile/rest lists");
            }
            String name = kvName("tl_attn_prefill_v" + hd / 64, kvScales);
            k.launch(
                    k.fn(t, name),
                    numTiles,
                    hq,
                    PREFILL_THREADS,
                    s,
                    name,
                    kvArgs(
                            kvScales,
                            p(q),
                            p(kCache),
                            p(vCache),
                            p(blockTables),
                            p(tokenSeq),
                            p(tokenPos),
                            i(maxBlocksPerSeq),
                            i(blockSize),
                            p(out),
                            p(tiles),
                            i(numTiles),
                            i(hq),
                            i(hk),
                            f(scale)));
            list = rest;
            count = numRest;
            if (count == 0) {
                return;
            }
        }
        int gh = AttentionSlices.splitGroup(hq / hk, hd);
        if (gh == 0) {
            String name = kvName("tl_attention", kvScales);
            k.launch(
                    k.fn(t, name),
                    n,
                    hq,
                    ATTENTION_THREADS,
                    s,
                    name,
                    kvArgs(
                            kvScales,
                            p(q),
                            p(kCache),
                            p(vCache),
                            p(blockTables),
                            p(tokenSeq),
                            p(tokenPos),
                            i(maxBlocksPerSeq),
                            i(blockSize),
                            p(out),
                            i(n),
                            i(hq),
                            i(hk),
                            i(hd),
                            f(scale)));
            return;
        }
        long tokens = list;
        int tokenCount = count;
        split(
                t,
                kvName("tl_attn_split_g" + gh + "_v" + hd / 64, kvScales),
                gh,
                count,
                hq,
                hd,
                workspace,
                list,
                out,
                s,
                (slices, tickets) -> kvArgs(
                        kvScales,
                        p(q),
                        p(kCache),
                        p(vCache),
                        p(blockTables),
                        p(tokenSeq),
                        p(tokenPos),
                        i(maxBlocksPerSeq),
                        i(blockSize),
                        p(out),
                        p(slices),
                        p(tickets),
                        p(tokens),
                        i(tokenCount),
                        i(hq),
                        i(hk),
                        f(scale)));
    }

    /**
     * {@link ModelKernels#qkvRope} and {@link ModelKernels#attention} of a step in which every token is its sequence's
     * only one (the caller's fact, e.g. a step of one token), in one kernel per layer ({@code tl_attn_rope_*}, then the
     * combine where the slices take it): the output, the cache rows written and the slices equal the two launches' bit
     * for bit. Takes the split-key kernel's head dims (64, 128, 256; {@link AttentionSlices#splitGroup}).
     */
    public void launchWithRope(
            DType t,
            Rope r,
            long kCache,
            long vCache,
            long blockTables,
            long tokenSeq,
            long tokenPos,
            int maxBlocksPerSeq,
            int blockSize,
            long out,
            long workspace,
            int n,
            int hq,
            int hk,
            int hd,
            float scale,
            long kvScales,
            CUstream s) {
        checkLaunch(hq, hk, hd, blockSize, maxBlocksPerSeq, kCache, vCache);
        int gh = AttentionSlices.splitGroup(hq / hk, hd);
        if (gh == 0) {
            throw new IllegalArgumentException("attention with rope: head dim " + hd + " with " + hq / hk
                    + " query heads per kv head has no split-key kernel (head dims 64, 128, 256)");
        }
        if (n <= 0) {
            return;
        }
        split(
                t,
                kvName("tl_attn_rope_g" + gh + "_v" + hd / 64, kvScales),
                gh,
                n,
                hq,
                hd,
                workspace,
                0,
                out,
                s,
                (slices, tickets) -> kvArgs(
                        kvScales,
                        p(r.qkv()),
                        p(r.bias()),
                        p(r.qNorm()),
                        p(r.kNorm()),
                        f(r.eps()),
                        p(r.cos()),
                        p(r.sin()),
                        p(r.slots()),
                        p(kCache),
                        p(vCache),
                        p(blockTables),
                        p(tokenSeq),
                        p(tokenPos),
                        i(maxBlocksPerSeq),
                        i(blockSize),
                        p(out),
                        p(slices),
                        p(tickets),
                        i(n),
                        i(hq),
                        i(hk),
                        f(scale)));
    }

    /**
     * What every attention launch checks first: its heads, the cache's geometry, the kernels' 16-byte K/V loads (aligned
     * caches) and a grid's y (at most 65535 query heads).
     */
    private static void checkLaunch(
            int hq, int hk, int hd, int blockSize, int maxBlocksPerSeq, long kCache, long vCache) {
        ModelKernels.heads(hq, hk, hd);
        ModelKernels.positive("blockSize", blockSize);
        ModelKernels.positive("maxBlocksPerSeq", maxBlocksPerSeq);
        if ((kCache & 15) != 0 || (vCache & 15) != 0) {
            throw new IllegalArgumentException("attention: k/v cache must be 16-byte aligned (kCache=0x"
                    + Long.toHexString(kCache) + ", vCache=0x" + Long.toHexString(vCache) + ")");
        }
        if (hq > 65535) {
            throw new IllegalArgumentException("attention: hq " + hq + " exceeds the grid's y limit 65535");
        }
    }

    /** A split-key launch's arguments, given where its slices go and its counters (0: the combine kernel merges). */
    private interface SplitArgs {
        Pointer[] of(long slices, long tickets);
    }

    /**
     * Launches split-key kernel {@code name} over {@code count} tokens ({@code list}: which, 0 for all) in as many key
     * slices as {@link AttentionSlices#splits} gives, and merges the slices (their last block or the combine kernel).
     */
    private void split(
            DType t,
            String name,
            int gh,
            int count,
            int hq,
            int hd,
            long workspace,
            long list,
            long out,
            CUstream s,
            SplitArgs args) {
        int perToken = hq / gh; // blocks per token and slice: hk kv heads x (group / gh)
        int splits = AttentionSlices.splits(count, perToken);
        if (splits > 1 && workspace == 0) {
            throw new IllegalArgumentException("attention: " + splits + " key slices need a workspace");
        }
        long slices = workspace == 0
                ? 0
                : workspace + AttentionSlices.TICKETS_BYTES; // the slices' records, after the counters
        k.launch3(
                k.fn(t, name),
                count,
                perToken,
                splits,
                SPLIT_THREADS,
                s,
                name,
                args.of(slices, fusedCombine && splits > 1 ? workspace : 0));
        if (splits > 1 && !fusedCombine) {
            k.launch(
                    k.fn(t, "tl_attn_combine"),
                    count,
                    hq,
                    SPLIT_THREADS,
                    s,
                    "tl_attn_combine",
                    p(slices),
                    p(list),
                    p(out),
                    i(count),
                    i(hq),
                    i(hd),
                    i(splits));
        }
    }

    /** The entry of {@code base} for the cache {@code kvScales} describes: {@code base} for T, {@code base_kv8} for FP8. */
    static String kvName(String base, long kvScales) {
        return kvScales == 0 ? base : base + "_kv8";
    }

    /** {@code args}, and the layer's scales after them for an FP8 cache (the _kv8 entries' last argument). */
    static Pointer[] kvArgs(long kvScales, Pointer... args) {
        if (kvScales == 0) {
            return args;
        }
        Pointer[] out = java.util.Arrays.copyOf(args, args.length + 1);
        out[args.length] = p(kvScales);
        return out;
    }
}
