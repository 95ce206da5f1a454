package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;
import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.MoeSpec;
import io.tensorlane.runtime.model.WeightType;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * The Mixture-of-Experts kernels of {@link ModelKernels} (tl_moe.cuh): routing; the pairs' expert linears that read only
 * the routed experts' rows (steps of few tokens); grouping the pairs by expert and un-permuting (long steps, around
 * cuBLAS GEMMs per expert). Launch shapes and preconditions as documented there; launches go through the owning
 * {@link ModelKernels}, on the thread that owns its context.
 */
public final class MoeKernels {
    static final int ROUTE_WARPS = 4;
    /** Output rows per block of the pair linears (one warp each): tl_model.cu's kGemvWarps. */
    static final int WARPS = GemvKernels.WARPS;

    static final int SORT_THREADS = 512;

    private final ModelKernels k;
    private final MoeDecodeKernels decode;
    private final CUfunction route = new CUfunction();
    private final CUfunction sort = new CUfunction();

    MoeKernels(ModelKernels k) {
        this.k = k;
        this.decode = new MoeDecodeKernels(k);
    }

    /** The decode kernels with fewer launches (tl_moe_fused.cuh). */
    public MoeDecodeKernels decode() {
        return decode;
    }

    void resolve(CUmodule module) {
        Cuda.check(
                cuModuleGetFunction(route, module, Kernels.MOE_ROUTE_KERNEL),
                "cuModuleGetFunction(" + Kernels.MOE_ROUTE_KERNEL + ")");
        Cuda.check(
                cuModuleGetFunction(sort, module, Kernels.MOE_SORT_KERNEL),
                "cuModuleGetFunction(" + Kernels.MOE_SORT_KERNEL + ")");
        if (Fp8Kernels.tensorCoresHere()) { // where groupedFp8 can run: its functions' dynamic shared limit, once
            for (DType t : new DType[] {DType.bf16, DType.fp16}) {
                for (WeightType type : new WeightType[] {WeightType.FP8_BLOCK, WeightType.FP8_ROW}) {
                    String name = Fp8Kernels.kernel("tl_moe_gemm_fp8", type);
                    // over the 48 KiB a launch gets by default
                    Cuda.check(
                            cuFuncSetAttribute(
                                    k.fn(t, name),
                                    CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    GEMM_FP8_SHARED_BYTES),
                            name + ": cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + GEMM_FP8_SHARED_BYTES
                                    + ")");
                }
            }
        }
    }

    /**
     * ids[n*k] / weights[n*k]: each token's k experts of highest softmax(logits[n, experts]) (fp32; ties: lower index),
     * in descending order, weighted by their probability ({@code norm}: divided by the k probabilities' sum).
     */
    public void route(long logits, int n, int experts, int topK, boolean norm, long ids, long weights, CUstream s) {
        ModelKernels.positive("experts", experts);
        if (experts > MoeSpec.MAX_EXPERTS || topK < 1 || topK > Math.min(experts, MoeSpec.MAX_TOP_K)) {
            throw new IllegalArgumentException("moe route: " + experts + " experts (at most " + MoeSpec.MAX_EXPERTS
                    + "), top-k " + topK + " (1.." + MoeSpec.MAX_TOP_K + ", at most the experts)");
        }
        if (n <= 0) {
            return;
        }
        k.launch(
                route,
                (n + ROUTE_WARPS - 1) / ROUTE_WARPS,
                1,
                ROUTE_WARPS * 32,
                s,
                Kernels.MOE_ROUTE_KERNEL,
                p(logits),
                i(n),
                i(experts),
                i(topK),
                i(norm ? 1 : 0),
                p(ids),
                p(weights));
    }

    /** y[n*k, out] in T: row p = expert ids[p]'s rows of w [experts, out, in] · x[p / k, :]. */
    public void gateUp(DType t, long x, long w, long y, long ids, int n, int topK, int in, int out, CUstream s) {
        pairs(t, "tl_moe_gate_up", x, w, y, ids, n, topK, in, out, s);
    }

    /** y[pairs, out] in fp32: row p = expert ids[p]'s rows of w [experts, out, in] · act[p, :]. */
    public void down(DType t, long act, long w, long yF32, long ids, int pairs, int in, int out, CUstream s) {
        pairs(t, "tl_moe_down", act, w, yF32, ids, pairs, 0, in, out, s);
    }

    /**
     * {@link #gateUp} over FP8 experts: w [experts x out, in] e4m3 with {@code scales} in the layout of {@code type}
     * (tl_moe_fp8.cuh; block grids indexed by the stacked row / its row block).
     */
    public void gateUpFp8(
            DType t,
            WeightType type,
            long x,
            long w,
            long scales,
            long y,
            long ids,
            int n,
            int topK,
            int in,
            int out,
            CUstream s) {
        pairsFp8(t, type, "tl_moe_gate_up_fp8", x, w, scales, y, ids, Math.multiplyExact(n, topK), topK, in, out, s);
    }

    /** {@link #down} over FP8 experts (fp32 rows out), scales as in {@link #gateUpFp8}. */
    public void downFp8(
            DType t,
            WeightType type,
            long act,
            long w,
            long scales,
            long yF32,
            long ids,
            int pairs,
            int in,
            int out,
            CUstream s) {
        pairsFp8(t, type, "tl_moe_down_fp8", act, w, scales, yF32, ids, pairs, 1, in, out, s);
    }

    private void pairsFp8(
            DType t,
            WeightType type,
            String base,
            long x,
            long w,
            long scales,
            long y,
            long ids,
            int pairs,
            int xdiv,
            int in,
            int out,
            CUstream s) {
        ModelKernels.positive("in", in);
        ModelKernels.positive("out", out);
        String name = Fp8Kernels.kernel(base, type);
        if (in % 16 == 0 && ((x & 15) != 0 || (w & 15) != 0)) {
            throw new IllegalArgumentException(name + ": rows of in % 16 == 0 need 16-byte aligned x and w (x=0x"
                    + Long.toHexString(x) + ", w=0x" + Long.toHexString(w) + ")");
        }
        if (pairs <= 0) {
            return;
        }
        k.launch(
                k.fn(t, name),
                pairs,
                (out + WARPS - 1) / WARPS,
                WARPS * 32,
                s,
                name,
                p(x),
                p(w),
                p(scales),
                p(y),
                p(ids),
                i(xdiv),
                i(in),
                i(out),
                i(type.rowBlock()));
    }

    /** Rows (tokens) of one tile of {@link #groupedFp8}: tl_moe_gemm_fp8.cuh's kBM. */
    static final int GEMM_FP8_ROWS = 64;
    /** Output columns of one tile, and the multiple of 128 both dimensions must be: kBN (and kBK). */
    static final int GEMM_FP8_COLS = 128;

    static final int GEMM_FP8_THREADS = 256;
    /**
     * Dynamic shared memory of a launch, kSharedBytes: 4 stages of the 64 x 128 A tile, the 128 x 128 B tile and their
     * 64 + 128 fp32 scales (99 KiB: the most one block of sm_89 takes; two blocks to an SM of sm_90).
     */
    static final int GEMM_FP8_SHARED_BYTES =
            4 * (GEMM_FP8_ROWS * 128 + GEMM_FP8_COLS * 128 + 4 * GEMM_FP8_ROWS + 4 * 128);

    /** Whether {@link #groupedFp8} takes an expert projection [out, in]: both multiples of 128. */
    static boolean groupedFp8Fits(int in, int out) {
        return in > 0 && out > 0 && in % GEMM_FP8_COLS == 0 && out % GEMM_FP8_COLS == 0;
    }

    /**
     * The grouped FP8 GEMM of a long step (tl_moe_gemm_fp8.cuh, FP8 tensor cores, sm_89 and newer): for each of
     * {@code tiles}' {@code tileCount} tiles (int4: expert, first row, the expert's end row, 0; up to {@link
     * #GEMM_FP8_ROWS} rows), y rows [out] in T = xq rows (e4m3, scales xs [in / 128, ldxs]) · the expert's slice of w
     * [experts x out, in] (e4m3, scales in the layout of {@code type} over the stacked rows)ᵀ.
     */
    public void groupedFp8(
            DType t,
            WeightType type,
            long xq,
            long xs,
            int ldxs,
            long w,
            long scales,
            long tiles,
            int tileCount,
            long y,
            int in,
            int out,
            CUstream s) {
        String name = Fp8Kernels.kernel("tl_moe_gemm_fp8", type);
        if (!groupedFp8Fits(in, out)) {
            throw new IllegalArgumentException(
                    name + ": in " + in + " and out " + out + " must be multiples of " + GEMM_FP8_COLS);
        }
        if (((xq | w | y) & 15) != 0) {
            throw new IllegalArgumentException(name + ": xq, w and y must be 16-byte aligned (xq=0x"
                    + Long.toHexString(xq) + ", w=0x" + Long.toHexString(w) + ", y=0x" + Long.toHexString(y) + ")");
        }
        if (tileCount <= 0) {
            return;
        }
        CUfunction f = k.fn(t, name); // its shared limit raised at load (resolve)
        Pointer params =
                Pointer.to(p(xq), p(xs), i(ldxs), p(w), p(scales), i(type.rowBlock()), p(tiles), p(y), i(out), i(in));
        Cuda.check(
                cuLaunchKernel(
                        f,
                        out / GEMM_FP8_COLS,
                        tileCount,
                        1,
                        GEMM_FP8_THREADS,
                        1,
                        1,
                        GEMM_FP8_SHARED_BYTES,
                        s,
                        params,
                        null),
                "cuLaunchKernel(" + name + ", grid " + out / GEMM_FP8_COLS + "x" + tileCount + ", "
                        + GEMM_FP8_SHARED_BYTES + " B shared)");
    }

    private void pairs(
            DType t, String name, long x, long w, long y, long ids, int rows, int topK, int in, int out, CUstream s) {
        ModelKernels.positive("in", in);
        ModelKernels.positive("out", out);
        if (in % 8 == 0 && ((x & 15) != 0 || (w & 15) != 0)) {
            throw new IllegalArgumentException(name + ": rows of in % 8 == 0 need 16-byte aligned x and w (x=0x"
                    + Long.toHexString(x) + ", w=0x" + Long.toHexString(w) + ")");
        }
        if (rows <= 0) {
            return;
        }
        int pairs = topK > 0 ? Math.multiplyExact(rows, topK) : rows;
        var args = topK > 0
                ? new jcuda.Pointer[] {p(x), p(w), p(y), p(ids), i(topK), i(in), i(out)}
                : new jcuda.Pointer[] {p(x), p(w), p(y), p(ids), i(in), i(out)};
        k.launch(k.fn(t, name), pairs, (out + WARPS - 1) / WARPS, WARPS * 32, s, name, args);
    }

    /**
     * y[n, out] in T = sum over each token's k slots (in order) of weights x its row of ys: ys[inv[p]] ({@code inv}
     * non-zero: the grouped GEMMs' rows, ys in T) or ys[p] ({@code inv} 0: the pairs' fp32 rows of {@link #down}).
     */
    public void combine(DType t, long ys, long inv, long weights, long y, int n, int topK, int out, CUstream s) {
        ModelKernels.positive("out", out);
        if (n <= 0) {
            return;
        }
        String name = inv == 0 ? "tl_moe_combine_f32" : "tl_moe_combine";
        long total = (long) n * out;
        int blocks = (int) Math.min(
                (total + ModelKernels.ELEMENTWISE_THREADS - 1) / ModelKernels.ELEMENTWISE_THREADS,
                ModelKernels.MAX_ELEMENTWISE_BLOCKS);
        k.launch(
                k.fn(t, name),
                blocks,
                1,
                ModelKernels.ELEMENTWISE_THREADS,
                s,
                name,
                p(ys),
                p(inv),
                p(weights),
                p(y),
                i(n),
                i(topK),
                i(out));
    }

    /**
     * Groups the pairs by expert, stably: counts[experts], offsets[experts + 1] (exclusive sums), sortedTok[pairs] (the
     * token of each pair in expert order), inv[pairs] (each pair's place in that order).
     */
    public void sort(
            long ids,
            int pairs,
            int experts,
            int topK,
            long counts,
            long offsets,
            long sortedTok,
            long inv,
            CUstream s) {
        if (experts < 1 || experts > Math.min(SORT_THREADS, MoeSpec.MAX_EXPERTS)) {
            throw new IllegalArgumentException("moe sort: " + experts + " experts (1.." + SORT_THREADS + ")");
        }
        if (pairs <= 0) {
            return;
        }
        k.launch(
                sort,
                1,
                1,
                SORT_THREADS,
                s,
                Kernels.MOE_SORT_KERNEL,
                p(ids),
                i(pairs),
                i(experts),
                i(topK),
                p(counts),
                p(offsets),
                p(sortedTok),
                p(inv));
    }
}
