package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.f;
import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.engine.Cuda;
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
    static final int ELEMENTWISE_THREADS = 256;
    static final int MAX_ELEMENTWISE_BLOCKS = 65535;

    private final CUmodule module = new CUmodule();
    private final Map<DType, Map<String, CUfunction>> typed = new EnumMap<>(DType.class);
    private boolean closed;
    private final AttentionKernels attention = new AttentionKernels(
            this,
            AttentionKernels.fusedCombine(System.getenv(AttentionKernels.COMBINE_ENV)),
            AttentionKernels.fusedRope(System.getenv(AttentionKernels.ROPE_ENV)));
    private final GemvKernels gemv = new GemvKernels(this);
    private final Fp8Kernels fp8 = new Fp8Kernels(this);
    private final FusedGemvKernels fused = new FusedGemvKernels(this, FusedGemvVariant.fromEnv());
    private final MoeKernels moe = new MoeKernels(this);
    private final SampleKernels sampler = new SampleKernels(this);
    private final L2PrefetchKernel prefetch = new L2PrefetchKernel(this);

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
            sampler.resolve(module);
            moe.resolve(module);
            prefetch.resolve(module);
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

    /**
     * Bias, optional per-head q/k RMSNorm, RoPE; q to qOut, k/v to the paged cache (slot < 0: skipped). {@code kvScales}
     * 0: the cache holds T; else the layer's {k_scale, v_scale} (fp32 on the GPU) and the cache e4m3 codes of
     * {@code T(value) / scale} (tl_kvcache.cuh).
     */
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
            long kvScales,
            CUstream s) {
        heads(hq, hk, hd);
        if (n <= 0) {
            return;
        }
        long tasks = (long) n * (hq + 2L * hk);
        long blocks = (tasks + ROPE_WARPS - 1) / ROPE_WARPS;
        String name = AttentionKernels.kvName("tl_qkv_rope", kvScales);
        launch(
                fn(t, name),
                Math.toIntExact(blocks),
                1,
                ROPE_WARPS * 32,
                s,
                name,
                AttentionKernels.kvArgs(
                        kvScales,
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
                        i(hd)));
    }

    /**
     * Paged causal GQA attention over a mixed prefill/decode batch (K/V of the step already in the cache). With
     * {@code numTiles > 0} (an {@link AttentionPlan} on the device: {@code tiles} pairs, {@code rest} tokens), the
     * tensor-core kernel serves the tiles and the split-key kernel the {@code numRest} rest tokens; with no tiles the
     * split-key kernel takes all {@code n} tokens. The split-key kernel runs when the head dim is 64, 128 or 256 (see
     * {@link AttentionKernels#splitGroup}); its slices of long key ranges meet in {@code workspace} ({@link
     * AttentionKernels#workspaceBytes} bytes, 16-byte aligned, allocated zeroed), merged by a second kernel or by their
     * last block. Other head dims run the per-head kernel (no workspace, no tiles).
     * {@code kvScales}: as for {@link #qkvRope} (0: the cache holds T; else the layer's scales and e4m3 codes).
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
            long kvScales,
            CUstream s) {
        attention.launch(
                t,
                q,
                kCache,
                vCache,
                blockTables,
                tokenSeq,
                tokenPos,
                maxBlocksPerSeq,
                blockSize,
                out,
                workspace,
                tiles,
                numTiles,
                rest,
                numRest,
                n,
                hq,
                hk,
                hd,
                scale,
                kvScales,
                s);
    }

    /** The attention launches and their switches ({@link AttentionKernels#COMBINE_ENV}, {@link AttentionKernels#ROPE_ENV}). */
    public AttentionKernels attentionKernels() {
        return attention;
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

    /**
     * y[out] = w[out, in] · x[in] for one token in T with fp32 accumulation ({@code in % 8 == 0}, x and w 16-byte
     * aligned): the weight-bandwidth-bound linear of a one-token decode step.
     */
    public void gemv(DType t, long x, long w, long y, int in, int out, CUstream s) {
        gemv.launch(t, x, w, y, in, out, s);
    }

    /** y[n, out] = x[n, in] · w[out, in]ᵀ in T on the tensor cores, 1..8 tokens (tl_gemv_mma*, {@code in % 8 == 0}). */
    public void gemvMma(DType t, long x, long w, long y, int n, int in, int out, CUstream s) {
        gemv.launchMma(t, x, w, y, n, in, out, s);
    }

    /** The FP8-weight kernels (tl_fp8.cuh, and the tensor-core GEMV's FP8 entries). */
    public Fp8Kernels fp8() {
        return fp8;
    }

    /** The one-token linears with the residual add, RMSNorm and silu folded in (tl_gemv_fused.cuh). */
    public FusedGemvKernels fused() {
        return fused;
    }

    /** The token sampler (tl_sample.cuh). */
    public SampleKernels sampler() {
        return sampler;
    }

    /** The weight prefetch toward L2 ({@link L2Prefetch}). */
    public L2PrefetchKernel prefetch() {
        return prefetch;
    }

    /** The Mixture-of-Experts kernels (tl_moe.cuh). */
    public MoeKernels moe() {
        if (closed) {
            throw new IllegalStateException("ModelKernels is closed");
        }
        return moe;
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

    /** The raw CUmodule of the model kernels (each waits for its predecessors first: tl_pdl.cuh). */
    long moduleAddress() {
        return Cuda.address(module);
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

    static void positive(String what, long v) {
        if (v <= 0) {
            throw new IllegalArgumentException(what + " must be positive, got " + v);
        }
    }

    CUfunction fn(DType t, String base) {
        if (closed) {
            throw new IllegalStateException("ModelKernels is closed");
        }
        Map<String, CUfunction> m = typed.get(t);
        if (m == null) {
            throw new IllegalArgumentException(base + ": element type " + t + " is not supported (bf16, fp16)");
        }
        CUfunction f = m.get(base);
        if (f == null) {
            throw new IllegalArgumentException(base + ": not among the model kernels (Kernels.MODEL_TYPED_KERNELS)");
        }
        return f;
    }

    void launch(CUfunction f, int gridX, int gridY, int threads, CUstream s, String name, Pointer... params) {
        launch3(f, gridX, gridY, 1, threads, s, name, params);
    }

    void launch3(
            CUfunction f, int gridX, int gridY, int gridZ, int threads, CUstream s, String name, Pointer... params) {
        if (closed) {
            throw new IllegalStateException("ModelKernels is closed");
        }
        Cuda.check(
                cuLaunchKernel(f, gridX, gridY, gridZ, threads, 1, 1, 0, s, Pointer.to(params), null),
                "cuLaunchKernel(" + name + ", grid " + gridX + "x" + gridY + "x" + gridZ + ", block " + threads + ")");
    }
}
