package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.sched.SamplingRows;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * The decoder's forward-pass kernels (tl_model.cu, fatbin {@link Kernels#MODEL_FATBIN_RESOURCE}) loaded into one
 * context, with one launch method per kernel. Every device argument is a raw 64-bit device address (0 = null where the
 * kernel allows it); the grid and block are chosen here (see the layout contract on each kernel in tl_model.cu).
 * Launches are asynchronous on the given stream; launch errors are thrown as {@link io.tensorlane.runtime.engine.CudaException}.
 * Not thread-safe beyond what the driver offers: use from the thread that owns the context.
 */
public final class ModelKernels implements AutoCloseable {
    /** Largest head dimension the rope and attention kernels take (per-warp staging and register arrays). */
    public static final int MAX_HEAD_DIM = 256;

    static final int EMBED_THREADS = 256;
    static final int RMSNORM_THREADS = 512;
    static final int ROPE_WARPS = 4;
    static final int ATTENTION_THREADS = 128;
    static final int SPLIT_THREADS = 128;
    static final int PREFILL_THREADS = 128;
    /** Blocks that keep an H200 (132 SMs) busy: two per SM. */
    static final int SPLIT_TARGET_BLOCKS = 264;

    static final int MAX_SPLITS = 32;
    static final int ELEMENTWISE_THREADS = 256;
    static final int SAMPLE_THREADS = 1024;
    static final int MAX_ELEMENTWISE_BLOCKS = 65535;

    private final CUmodule module = new CUmodule();
    private final Map<DType, Map<String, CUfunction>> typed = new EnumMap<>(DType.class);
    private final CUfunction sample = new CUfunction();
    private boolean closed;

    /** Loads the model fatbin in the current context and resolves every entry point. */
    public ModelKernels() {
        Cuda.check(
                cuModuleLoadData(module, Kernels.modelFatbin()),
                "cuModuleLoadData(" + Kernels.MODEL_FATBIN_RESOURCE + ")");
        try {
            for (DType d : new DType[] {DType.bf16, DType.fp16}) {
                Map<String, CUfunction> m = new HashMap<>();
                for (String base : Kernels.MODEL_TYPED_KERNELS) {
                    String name = Kernels.modelKernel(base, d);
                    CUfunction f = new CUfunction();
                    Cuda.check(cuModuleGetFunction(f, module, name), "cuModuleGetFunction(" + name + ")");
                    m.put(base, f);
                }
                typed.put(d, m);
            }
            Cuda.check(
                    cuModuleGetFunction(sample, module, Kernels.SAMPLE_KERNEL),
                    "cuModuleGetFunction(" + Kernels.SAMPLE_KERNEL + ")");
        } catch (RuntimeException e) {
            cuModuleUnload(module);
            throw e;
        }
    }

    /** out[i,:] = table[ids[i] - vocabStart, :] inside this rank's vocabulary shard, else zeros. */
    public void embed(
            DType t, long ids, int n, long table, int vocabStart, int vocabRows, int hidden, long out, CUstream s) {
        positive("hidden", hidden);
        if (n <= 0) {
            return;
        }
        launch(
                fn(t, "tl_embed"),
                n,
                1,
                EMBED_THREADS,
                s,
                "tl_embed",
                p(ids),
                i(n),
                p(table),
                i(vocabStart),
                i(vocabRows),
                i(hidden),
                p(out));
    }

    /** mode 0: residual = delta; 1: residual += delta; 2: residual unchanged; then out = RMSNorm(residual) * weight. */
    public void addRmsNorm(
            DType t,
            long residual,
            long delta,
            long weight,
            long out,
            int n,
            int hidden,
            float eps,
            int mode,
            CUstream s) {
        positive("hidden", hidden);
        if (mode < 0 || mode > 2) {
            throw new IllegalArgumentException(
                    "addRmsNorm mode must be 0 (set), 1 (add) or 2 (norm only), got " + mode);
        }
        if (mode != 2 && delta == 0) {
            throw new IllegalArgumentException("addRmsNorm mode " + mode + " needs delta");
        }
        if (n <= 0) {
            return;
        }
        launch(
                fn(t, "tl_add_rmsnorm"),
                n,
                1,
                RMSNORM_THREADS,
                s,
                "tl_add_rmsnorm",
                p(residual),
                p(delta),
                p(weight),
                p(out),
                i(n),
                i(hidden),
                f(eps),
                i(mode));
    }

    /** Bias, optional per-head q/k RMSNorm, RoPE; q to qOut, k/v to the paged cache (slot < 0: skipped). */
    public void qkvRope(
            DType t,
            long qkv,
            long bias,
            long qNorm,
            long kNorm,
            float eps,
            long cos,
            long sin,
            long positions,
            long slots,
            long qOut,
            long kCache,
            long vCache,
            int n,
            int hq,
            int hk,
            int hd,
            CUstream s) {
        heads(hq, hk, hd);
        if (n <= 0) {
            return;
        }
        long tasks = (long) n * (hq + 2L * hk);
        long blocks = (tasks + ROPE_WARPS - 1) / ROPE_WARPS;
        launch(
                fn(t, "tl_qkv_rope"),
                Math.toIntExact(blocks),
                1,
                ROPE_WARPS * 32,
                s,
                "tl_qkv_rope",
                p(qkv),
                p(bias),
                p(qNorm),
                p(kNorm),
                f(eps),
                p(cos),
                p(sin),
                p(positions),
                p(slots),
                p(qOut),
                p(kCache),
                p(vCache),
                i(n),
                i(hq),
                i(hk),
                i(hd));
    }

    /**
     * Paged causal GQA attention over a mixed prefill/decode batch (K/V of the step already in the cache). With
     * {@code numTiles > 0} (an {@link AttentionPlan} on the device: {@code tiles} pairs, {@code rest} tokens), the
     * tensor-core kernel serves the tiles and the split-key kernel the {@code numRest} rest tokens; with no tiles the
     * split-key kernel takes all {@code n} tokens. The split-key kernel runs when the head dim is 64, 128 or 256 (see
     * {@link #splitGroup}); its slices of long key ranges meet in {@code workspace} ({@link #attentionWorkspaceBytes}
     * bytes, 16-byte aligned), merged by a second kernel. Other head dims run the per-head kernel (no workspace, no tiles).
     */
    public void attention(
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
            CUstream s) {
        heads(hq, hk, hd);
        positive("blockSize", blockSize);
        positive("maxBlocksPerSeq", maxBlocksPerSeq);
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
            String name = "tl_attn_prefill_v" + hd / 64;
            launch(
                    fn(t, name),
                    numTiles,
                    hq,
                    PREFILL_THREADS,
                    s,
                    name,
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
                    f(scale));
            list = rest;
            count = numRest;
            if (count == 0) {
                return;
            }
        }
        int gh = splitGroup(hq / hk, hd);
        if (gh == 0) {
            launch(
                    fn(t, "tl_attention"),
                    n,
                    hq,
                    ATTENTION_THREADS,
                    s,
                    "tl_attention",
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
                    f(scale));
            return;
        }
        int perToken = hq / gh; // blocks per token and slice: hk kv heads x (group / gh)
        int splits = splits(count, perToken);
        if (splits > 1 && workspace == 0) {
            throw new IllegalArgumentException("attention: " + splits + " key slices need a workspace");
        }
        String name = "tl_attn_split_g" + gh + "_v" + hd / 64;
        launch3(
                fn(t, name),
                count,
                perToken,
                splits,
                SPLIT_THREADS,
                s,
                name,
                p(q),
                p(kCache),
                p(vCache),
                p(blockTables),
                p(tokenSeq),
                p(tokenPos),
                i(maxBlocksPerSeq),
                i(blockSize),
                p(out),
                p(workspace),
                p(list),
                i(count),
                i(hq),
                i(hk),
                f(scale));
        if (splits > 1) {
            launch(
                    fn(t, "tl_attn_combine"),
                    count,
                    hq,
                    SPLIT_THREADS,
                    s,
                    "tl_attn_combine",
                    p(workspace),
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

    /** Bytes of the attention workspace for any batch: the largest n x hq x slices x (hd + 2) floats over n with slices > 1. */
    public static long attentionWorkspaceBytes(int hq, int hk, int hd) {
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

    /** out[i,j] = silu(gateUp[i,j]) * gateUp[i, inter + j]. */
    public void siluMul(DType t, long gateUp, long out, int n, int inter, CUstream s) {
        positive("inter", inter);
        if (n <= 0) {
            return;
        }
        long total = (long) n * inter;
        int blocks = (int) Math.min((total + ELEMENTWISE_THREADS - 1) / ELEMENTWISE_THREADS, MAX_ELEMENTWISE_BLOCKS);
        launch(
                fn(t, "tl_silu_mul"),
                blocks,
                1,
                ELEMENTWISE_THREADS,
                s,
                "tl_silu_mul",
                p(gateUp),
                p(out),
                i(n),
                i(inter));
    }

    /** out[i,:] = in[rows[i],:]. */
    public void gatherRows(DType t, long in, long rows, long out, int m, int cols, CUstream s) {
        positive("cols", cols);
        if (m <= 0) {
            return;
        }
        launch(
                fn(t, "tl_gather_rows"),
                m,
                1,
                ELEMENTWISE_THREADS,
                s,
                "tl_gather_rows",
                p(in),
                p(rows),
                p(out),
                i(m),
                i(cols));
    }

    /**
     * outIds[i] = the token drawn from fp32 logits row i (row i at logits + i*stride elements) by row i of {@code params}
     * (a {@link SamplingRows} layout for {@code capacity} rows, 8-byte aligned): greedy rows take the argmax (ties: lowest
     * index; NaN never wins), others temperature / top-k / top-p / min-p with the seeded Gumbel-max draw (tl_sample.cuh).
     */
    public void sample(long logits, int m, int vocab, long stride, long params, int capacity, long outIds, CUstream s) {
        positive("vocab", vocab);
        if (stride < vocab) {
            throw new IllegalArgumentException("sample: stride " + stride + " < vocab " + vocab);
        }
        if (m > capacity || capacity % 2 != 0 || (params & 7) != 0) {
            throw new IllegalArgumentException("sample: " + m + " rows need an even capacity >= m (got " + capacity
                    + ") and 8-byte aligned params");
        }
        if (m <= 0) {
            return;
        }
        launch(
                sample,
                m,
                1,
                SAMPLE_THREADS,
                s,
                Kernels.SAMPLE_KERNEL,
                p(logits),
                i(m),
                i(vocab),
                l(stride),
                p(params),
                i(capacity),
                p(outIds));
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            cuModuleUnload(module);
        }
    }

    // ---- helpers ----

    static void heads(int hq, int hk, int hd) {
        positive("hq", hq);
        positive("hk", hk);
        if (hq % hk != 0) {
            throw new IllegalArgumentException("hq " + hq + " is not a multiple of hk " + hk);
        }
        if (hd <= 0 || hd % 32 != 0 || hd > MAX_HEAD_DIM) {
            throw new IllegalArgumentException(
                    "head dim " + hd + " must be a positive multiple of 32 and at most " + MAX_HEAD_DIM);
        }
    }

    private static void positive(String what, long v) {
        if (v <= 0) {
            throw new IllegalArgumentException(what + " must be positive, got " + v);
        }
    }

    private CUfunction fn(DType t, String base) {
        if (closed) {
            throw new IllegalStateException("ModelKernels is closed");
        }
        Map<String, CUfunction> m = typed.get(t);
        if (m == null) {
            throw new IllegalArgumentException(base + ": element type " + t + " is not supported (bf16, fp16)");
        }
        return m.get(base);
    }

    private static Pointer p(long address) {
        return Pointer.to(new long[] {address});
    }

    private static Pointer l(long v) {
        return Pointer.to(new long[] {v});
    }

    private static Pointer i(int v) {
        return Pointer.to(new int[] {v});
    }

    private static Pointer f(float v) {
        return Pointer.to(new float[] {v});
    }

    private void launch(CUfunction f, int gridX, int gridY, int threads, CUstream s, String name, Pointer... params) {
        launch3(f, gridX, gridY, 1, threads, s, name, params);
    }

    private void launch3(
            CUfunction f, int gridX, int gridY, int gridZ, int threads, CUstream s, String name, Pointer... params) {
        if (closed) {
            throw new IllegalStateException("ModelKernels is closed");
        }
        Cuda.check(
                cuLaunchKernel(f, gridX, gridY, gridZ, threads, 1, 1, 0, s, Pointer.to(params), null),
                "cuLaunchKernel(" + name + ", grid " + gridX + "x" + gridY + "x" + gridZ + ", block " + threads + ")");
    }
}
