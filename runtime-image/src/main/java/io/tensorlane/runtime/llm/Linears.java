package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.model.WeightType;
import jcuda.driver.CUstream;

/**
 * The decoder linears y[n, out] = x[n, in] · w[out, in]ᵀ of one rank, by weight key, whatever each weight's type:
 * dense weights take the GEMV kernel where {@link GemvPolicy} takes the step and cuBLAS otherwise; FP8 weights take
 * {@link Fp8Linear}. The attention and MLP blocks call this; none of them looks at a weight's type.
 */
final class Linears {
    private final RankWeights weights;
    private final ModelKernels kernels;
    private final Cublas blas;
    private final Fp8Linear fp8;
    private final GemvPolicy gemv;
    private final DType dt;
    private final GemvMma mma;
    private final boolean fused;

    /**
     * {@code fp8} null: the model has no FP8 weights; {@code mma}: which GEMVs run on the tensor cores; {@code fused}:
     * the one-token kernels with the residual stream folded in may be used ({@link #fusable}).
     */
    Linears(
            RankWeights weights,
            ModelKernels kernels,
            Cublas blas,
            Fp8Linear fp8,
            GemvPolicy gemv,
            GemvMma mma,
            boolean fused,
            DType dt) {
        this.mma = mma;
        this.fused = fused;
        this.weights = weights;
        this.kernels = kernels;
        this.blas = blas;
        this.fp8 = fp8;
        this.gemv = gemv;
        this.dt = dt;
    }

    void linear(GemvPolicy.Linear l, long x, String key, long y, int n, int in, int out, CUstream s) {
        RankWeights.Weight w = weights.weight(key);
        if (!w.type().fp8()) {
            if (gemv.use(l, n, in)) {
                if (mma.uses(w.type())) {
                    kernels.gemvMma(dt, x, w.address(), y, n, in, out, s);
                } else {
                    kernels.gemv(dt, x, w.address(), y, in, out, s);
                }
            } else {
                blas.linear(dt, x, w.address(), y, dt, n, in, out, out);
            }
        } else {
            fp8.linear(l, x, w, y, n, in, out, s);
        }
    }

    /**
     * Whether the weight {@code key} of linear {@code l} (rows of {@code in}) takes the one-token kernels with the
     * residual stream folded in ({@link FusedGemvKernels}): switched on, a linear the GEMV policy gives the GEMV, the
     * tensor-core GEMV not forced ({@link GemvMma#ON}), and a shape the kernels fit. Under {@link GemvMma#AUTO} the
     * fused one-warp-per-row kernels win for block-scaled FP8 too (H200, 2026-12-03 15:06 UTC, 8B geometry, batch 1:
     * 3.373 ms against 3.525 on the tensor cores unfused), so AUTO's tensor cores serve the steps that do not fuse.
     */
    boolean fusable(GemvPolicy.Linear l, String key, int in) {
        return fusable(fused, gemv, mma, l, weights.weight(key).type(), in);
    }

    /** {@link #fusable(GemvPolicy.Linear, String, int)} as a pure decision over the switches and the weight. */
    static boolean fusable(boolean fused, GemvPolicy gemv, GemvMma mma, GemvPolicy.Linear l, WeightType t, int in) {
        boolean normed = l == GemvPolicy.Linear.QKV || l == GemvPolicy.Linear.GATE_UP; // x = RMSNorm staged in-kernel
        return fused
                && gemv.linears().contains(l)
                && mma != GemvMma.ON
                && (normed ? FusedGemvKernels.normFits(t, in) : FusedGemvKernels.fits(t, in));
    }

    /**
     * y = w · (RMSNorm(r) · gamma) for one token, r fp32 [in] unchanged; {@code silu}: w is a fused gate/up weight of
     * 2 {@code out} rows and y = silu(gate) · up. Only where {@link #fusable} (decided once at load; the kernels
     * check the shape).
     */
    void normLinear(long r, long gamma, float eps, String key, long y, int in, int out, boolean silu, CUstream s) {
        RankWeights.Weight w = weights.weight(key);
        kernels.fused().norm(dt, w.type(), r, gamma, eps, w.address(), scales(w), y, in, out, silu, s);
    }

    /** r[out] += w · x for one token (x [in] in the model's dtype, r fp32). Only where {@link #fusable}. */
    void residualLinear(long x, String key, long r, int in, int out, CUstream s) {
        RankWeights.Weight w = weights.weight(key);
        kernels.fused().residual(dt, w.type(), x, w.address(), scales(w), r, in, out, s);
    }

    /** Whether every layer's qkv and o projections are {@link #fusable} (the attention half of a fused step). */
    boolean fusesAttention(int layers, int hidden, int attnCols) {
        for (int l = 0; l < layers; l++) {
            String p = "layers." + l + ".";
            if (!fusable(GemvPolicy.Linear.QKV, p + "qkv", hidden)
                    || !fusable(GemvPolicy.Linear.O, p + "o", attnCols)) {
                return false;
            }
        }
        return true;
    }

    private static long scales(RankWeights.Weight w) {
        return w.type().fp8() ? w.scales() : 0;
    }
}
