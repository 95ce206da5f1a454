package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.f;
import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.DType;
import jcuda.Pointer;
import jcuda.driver.CUstream;

/**
 * The attention launches of {@link ModelKernels}: the tensor-core kernel over query tiles, the split-key kernel over
 * key slices with its combine kernel, and the per-head kernel for other head dims; and the arithmetic of the slices and
 * of their workspace. Launches go through the owning {@link ModelKernels} (its module, its closed check).
 */
public final class AttentionKernels {
    static final int ATTENTION_THREADS = 128;
    static final int SPLIT_THREADS = 128;
    static final int PREFILL_THREADS = 128;
    /** Blocks that keep an H200 (132 SMs) busy: two per SM. */
    static final int SPLIT_TARGET_BLOCKS = 264;

    static final int MAX_SPLITS = 32;

    /**
     * {@code fused}: the last block of each query head group's key slices merges them ({@code tl_attn_split} with its
     * tickets, one kernel fewer a layer); {@code kernel} (unset): the combine kernel does. Built 2026-12-04, not yet run on
     * a GPU; kernelcheck's attention cases compare the two bit for bit.
     */
    public static final String COMBINE_ENV = "TENSORLANE_ATTN_COMBINE";

    private final ModelKernels k;
    private boolean fusedCombine;

    AttentionKernels(ModelKernels k, boolean fusedCombine) {
        this.k = k;
        this.fusedCombine = fusedCombine;
    }

    /** {@value #COMBINE_ENV}'s value: true for {@code fused}, false for {@code kernel} (also unset or blank). */
    static boolean fusedCombine(String value) {
        if (value == null || value.isBlank()) {
            return false;
        }
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "fused" -> true;
            case "kernel" -> false;
            default ->
                throw new IllegalArgumentException(
                        COMBINE_ENV + "='" + value + "': expected kernel (the combine kernel) or fused");
        };
    }

    boolean fusedCombine() {
        return fusedCombine;
    }

    void fusedCombine(boolean on) {
        fusedCombine = on;
    }

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
        int gh = splitGroup(hq / hk, hd);
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
        int perToken = hq / gh; // blocks per token and slice: hk kv heads x (group / gh)
        int splits = splits(count, perToken);
        if (splits > 1 && workspace == 0) {
            throw new IllegalArgumentException("attention: " + splits + " key slices need a workspace");
        }
        long slices = workspace == 0 ? 0 : workspace + TICKETS_BYTES; // the slices' records, after the counters
        String name = kvName("tl_attn_split_g" + gh + "_v" + hd / 64, kvScales);
        k.launch3(
                k.fn(t, name),
                count,
                perToken,
                splits,
                SPLIT_THREADS,
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
                        p(slices),
                        p(fusedCombine && splits > 1 ? workspace : 0),
                        p(list),
                        i(count),
                        i(hq),
                        i(hk),
                        f(scale)));
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
