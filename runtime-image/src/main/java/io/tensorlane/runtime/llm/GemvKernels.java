package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.DType;
import jcuda.driver.CUstream;

/**
 * The single-token linear of {@link ModelKernels} (tl_gemv in tl_model.cu): y[out] = w[out, in] · x[in], one warp per
 * output row. A decode step of one token reads each weight once and does next to no arithmetic, so what counts is how
 * close the read comes to the memory bandwidth; which linears use it is {@link GemvPolicy}'s decision. Launches go
 * through the owning {@link ModelKernels}.
 */
final class GemvKernels {
    /** Output rows per block (one warp each); the kernel's kGemvWarps. */
    static final int WARPS = 8;

    private final ModelKernels k;

    GemvKernels(ModelKernels k) {
        this.k = k;
    }

    /** Whether the kernel takes this shape: one token and rows of whole 16-byte chunks. */
    static boolean fits(int n, int in) {
        return n == 1 && in > 0 && in % 8 == 0;
    }

    /** {@link ModelKernels#gemv}. */
    void launch(DType t, long x, long w, long y, int in, int out, CUstream s) {
        ModelKernels.positive("in", in);
        ModelKernels.positive("out", out);
        if (!fits(1, in)) {
            throw new IllegalArgumentException("gemv takes rows of whole 16-byte chunks (in % 8 == 0), got in=" + in);
        }
        if ((x & 15) != 0 || (w & 15) != 0) {
            throw new IllegalArgumentException("gemv: x and w must be 16-byte aligned (x=0x" + Long.toHexString(x)
                    + ", w=0x" + Long.toHexString(w) + ")");
        }
        k.launch(
                k.fn(t, "tl_gemv"),
                (out + WARPS - 1) / WARPS,
                1,
                WARPS * 32,
                s,
                "tl_gemv",
                p(x),
                p(w),
                p(y),
                i(in),
                i(out));
    }
}
