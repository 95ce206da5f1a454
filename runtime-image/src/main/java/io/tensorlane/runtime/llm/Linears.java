package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
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

    /** {@code fp8} null: the model has no FP8 weights; {@code mma}: which GEMVs run on the tensor cores. */
    Linears(
            RankWeights weights,
            ModelKernels kernels,
            Cublas blas,
            Fp8Linear fp8,
            GemvPolicy gemv,
            GemvMma mma,
            DType dt) {
        this.mma = mma;
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
}
