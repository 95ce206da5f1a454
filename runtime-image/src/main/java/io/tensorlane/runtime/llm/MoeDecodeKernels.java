package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.f;
import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.model.MoeSpec;
import io.tensorlane.runtime.model.WeightType;
import jcuda.driver.CUstream;

/**
 * The MoE decode kernels with fewer launches (tl_moe_fused.cuh), for steps of few tokens ({@link MoeDecodePath}): the
 * router's logits GEMV fused with softmax + top-k + renormalise ({@link #router}), gate/up with silu(gate) * up in its
 * epilogue ({@link #gateUpSilu}), and down with each token's weighted sum over its k experts ({@link #downSum}; one
 * warp per output in slot order, no atomics: deterministic). They replace cuBLAS' router GEMM, tl_moe_route,
 * tl_moe_gate_up, tl_silu_mul, tl_moe_down and tl_moe_combine_f32: six launches a layer become three. Launches go
 * through the owning {@link ModelKernels}.
 */
public final class MoeDecodeKernels {
    /** Expert rows per block of tl_moe_router (tl_moe_fused.cuh's kMoeRouterWarps). */
    static final int ROUTER_WARPS = 8;
    /** The longest step tl_moe_router takes (kMoeRouterMaxTokens). */
    public static final int ROUTER_MAX_TOKENS = 8;
    /** Expert rows per block of tl_moe_router_norm (kMoeRouterNormThreads / 32: tl_add_rmsnorm's block of 512). */
    static final int ROUTER_NORM_WARPS = 16;

    private static final int WARPS = GemvKernels.WARPS;

    private final ModelKernels k;

    MoeDecodeKernels(ModelKernels k) {
        this.k = k;
    }

    /**
     * logits[n, experts] (fp32 scratch) = x[n, in] · w[experts, in]^T, then ids[n*k] / weights[n*k] as {@link
     * MoeKernels#route} computes them from those logits. {@code counter}: 4 bytes of device memory, zero before the first
     * launch; the kernel leaves it zero (its last block resets it), so the launch replays in CUDA graphs.
     */
    public void router(
            DType t,
            long x,
            long w,
            long logits,
            long counter,
            int n,
            int in,
            int experts,
            int topK,
            boolean norm,
            long ids,
            long weights,
            CUstream s) {
        String name = "tl_moe_router";
        checkRouter(name, n, in, experts, topK, x, w, counter);
        if (n <= 0) {
            return;
        }
        k.launch(
                k.fn(t, name),
                (experts + ROUTER_WARPS - 1) / ROUTER_WARPS,
                1,
                ROUTER_WARPS * 32,
                s,
                name,
                p(x),
                p(w),
                p(logits),
                p(counter),
                i(n),
                i(in),
                i(experts),
                i(topK),
                i(norm ? 1 : 0),
                p(ids),
                p(weights));
    }

    /**
     * One token's RMSNorm and router in one launch: xn[in] = T(gamma * r * rsqrt(mean(r^2) + eps)) as {@link
     * ModelKernels#addRmsNorm}'s mode 2 writes it (the residual r, fp32, only read; the same bits: the kernel's block is
     * that kernel's), then {@link #router} over it (one token). {@code in} at most {@value FusedGemvKernels#MAX_IN}
     * (the row is staged in shared memory).
     */
    public void routerNorm(
            DType t,
            long residual,
            long gamma,
            float eps,
            long xn,
            long w,
            long logits,
            long counter,
            int in,
            int experts,
            int topK,
            boolean norm,
            long ids,
            long weights,
            CUstream s) {
        String name = "tl_moe_router_norm";
        checkRouter(name, 1, in, experts, topK, xn, w, counter);
        if (in > FusedGemvKernels.MAX_IN) {
            throw new IllegalArgumentException(name + ": hidden " + in + " exceeds the row staged in shared memory ("
                    + FusedGemvKernels.MAX_IN + "); norm and router as two launches");
        }
        k.launch(
                k.fn(t, name),
                (experts + ROUTER_NORM_WARPS - 1) / ROUTER_NORM_WARPS,
                1,
                ROUTER_NORM_WARPS * 32,
                s,
                name,
                p(residual),
                p(gamma),
                f(eps),
                p(xn),
                p(w),
                p(logits),
                p(counter),
                i(in),
                i(experts),
                i(topK),
                i(norm ? 1 : 0),
                p(ids),
                p(weights));
    }

    private static void checkRouter(String name, int n, int in, int experts, int topK, long x, long w, long counter) {
        ModelKernels.positive("in", in);
        ModelKernels.positive("experts", experts);
        if (experts > MoeSpec.MAX_EXPERTS || topK < 1 || topK > Math.min(experts, MoeSpec.MAX_TOP_K)) {
            throw new IllegalArgumentException(name + ": " + experts + " experts (at most " + MoeSpec.MAX_EXPERTS
                    + "), top-k " + topK + " (1.." + MoeSpec.MAX_TOP_K + ", at most the experts)");
        }
        if (n > ROUTER_MAX_TOKENS) {
            throw new IllegalArgumentException(
                    name + ": " + n + " tokens (at most " + ROUTER_MAX_TOKENS + "; longer steps: cuBLAS + route)");
        }
        aligned(name, in, 8, x, w);
        if (counter == 0) {
            throw new IllegalArgumentException(name + ": counter must be device memory (4 bytes, zeroed)");
        }
    }

    /**
     * act[n*k, inter] in T: row p = silu(gate) * up of expert ids[p]'s gate rows (0..inter) and up rows (inter..2 inter)
     * of w [experts, 2 inter, in] · x[p / k, :], gate and up rounded to T first (as tl_silu_mul reads them).
     */
    public void gateUpSilu(
            DType t, long x, long w, long act, long ids, int n, int topK, int in, int inter, CUstream s) {
        ModelKernels.positive("inter", inter);
        ModelKernels.positive("top-k", topK);
        aligned("tl_moe_gate_up_silu", in, 8, x, w);
        if (n <= 0) {
            return;
        }
        String name = "tl_moe_gate_up_silu";
        k.launch(
                k.fn(t, name),
                Math.multiplyExact(n, topK),
                (inter + WARPS - 1) / WARPS,
                WARPS * 32,
                s,
                name,
                p(x),
                p(w),
                p(act),
                p(ids),
                i(topK),
                i(in),
                i(inter));
    }

    /**
     * y[n, out] in T = sum over each token's k slots of weights[p] x (expert ids[p]'s rows of w [experts, out, in] ·
     * act[p]); with {@code residual} that sum is added to the fp32 residual stream at {@code y} instead, as {@code
     * tl_add_rmsnorm}'s mode 1 adds it ({@code tl_moe_down_sum_res}: a fused one-token step).
     */
    public void downSum(
            DType t,
            long act,
            long w,
            long y,
            boolean residual,
            long ids,
            long weights,
            int n,
            int topK,
            int in,
            int out,
            CUstream s) {
        String name = residual ? "tl_moe_down_sum_res" : "tl_moe_down_sum";
        ModelKernels.positive("out", out);
        ModelKernels.positive("top-k", topK);
        aligned(name, in, 8, act, w);
        if (n <= 0) {
            return;
        }
        k.launch(
                k.fn(t, name),
                n,
                (out + WARPS - 1) / WARPS,
                WARPS * 32,
                s,
                name,
                p(act),
                p(w),
                p(y),
                p(ids),
                p(weights),
                i(topK),
                i(in),
                i(out));
    }

    /** {@link #gateUpSilu} over FP8 experts (w [experts x 2 inter, in] e4m3, scales in the layout of {@code type}). */
    public void gateUpSiluFp8(
            DType t,
            WeightType type,
            long x,
            long w,
            long scales,
            long act,
            long ids,
            int n,
            int topK,
            int in,
            int inter,
            CUstream s) {
        ModelKernels.positive("inter", inter);
        ModelKernels.positive("top-k", topK);
        String name = Fp8Kernels.kernel("tl_moe_gate_up_silu_fp8", type);
        aligned(name, in, 16, x, w);
        if (n <= 0) {
            return;
        }
        k.launch(
                k.fn(t, name),
                Math.multiplyExact(n, topK),
                (inter + WARPS - 1) / WARPS,
                WARPS * 32,
                s,
                name,
                p(x),
                p(w),
                p(scales),
                p(act),
                p(ids),
                i(topK),
                i(in),
                i(inter),
                i(type.rowBlock()));
    }

    /**
     * {@link #downSum} over FP8 experts (w [experts x out, in] e4m3, scales as in {@link #gateUpSiluFp8}), into {@code y}
     * or added to the residual stream there ({@code residual}, as {@link #downSum}).
     */
    public void downSumFp8(
            DType t,
            WeightType type,
            long act,
            long w,
            long scales,
            long y,
            boolean residual,
            long ids,
            long weights,
            int n,
            int topK,
            int in,
            int out,
            CUstream s) {
        ModelKernels.positive("out", out);
        ModelKernels.positive("top-k", topK);
        String name = Fp8Kernels.kernel(residual ? "tl_moe_down_sum_res_fp8" : "tl_moe_down_sum_fp8", type);
        aligned(name, in, 16, act, w);
        if (n <= 0) {
            return;
        }
        k.launch(
                k.fn(t, name),
                n,
                (out + WARPS - 1) / WARPS,
                WARPS * 32,
                s,
                name,
                p(act),
                p(w),
                p(scales),
                p(y),
                p(ids),
                p(weights),
                i(topK),
                i(in),
                i(out),
                i(type.rowBlock()));
    }

    /** Rows of whole 16-byte chunks ({@code in % chunk == 0}) are read as uint4: x and w must be 16-byte aligned. */
    private static void aligned(String name, int in, int chunk, long x, long w) {
        ModelKernels.positive("in", in);
        if (in % chunk == 0 && ((x & 15) != 0 || (w & 15) != 0)) {
            throw new IllegalArgumentException(name + ": rows of in % " + chunk + " == 0 need 16-byte aligned x and w"
                    + " (x=0x" + Long.toHexString(x) + ", w=0x" + Long.toHexString(w) + ")");
        }
    }
}
