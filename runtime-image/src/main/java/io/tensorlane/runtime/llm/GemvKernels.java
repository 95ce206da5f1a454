package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.DType;
import jcuda.driver.CUstream;

/**
 * The single-token linear of {@link ModelKernels}: y[out] = w[out, in] · x[in], either one warp per output row (tl_gemv
 * in tl_model.cu) or 16 rows a block on the tensor cores (tl_gemv_mma1 in tl_gemv_mma.cuh, which also takes up to
 * {@link #MMA_TOKENS} tokens). A decode step of one token reads each weight once and does next to no arithmetic, so
 * what counts is how close the read comes to the memory bandwidth; which linears use it is {@link GemvPolicy}'s
 * decision, which kernel {@link KernelChoices#gemvMma}'s. Launches go through the owning {@link ModelKernels}.
 */
final class GemvKernels {
    /** Output rows per block (one warp each); the kernel's kGemvWarps. */
    static final int WARPS = 8;
    /** Output rows per block of the tensor-core kernels (tl_gemv_mma*); the kernel's kMvRows. */
    static final int MMA_ROWS = 16;
    /** Threads per block of the tensor-core kernels: kMvWarps warps. */
    static final int MMA_THREADS = 8 * 32;
    /** Most tokens of the tensor-core kernels; the kernel's kMvTokens (its mma's N). */
    static final int MMA_TOKENS = 8;

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
        aligned(x, w);
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

    /**
     * y[n, out] = x[n, in] · w[out, in]ᵀ on the tensor cores for 1..{@link #MMA_TOKENS} tokens ({@code in % 8 == 0}, x
     * and w 16-byte aligned): tl_gemv_mma1 for one token, tl_gemv_mma for more.
     */
    void launchMma(DType t, long x, long w, long y, int n, int in, int out, CUstream s) {
        ModelKernels.positive("in", in);
        ModelKernels.positive("out", out);
        if (n < 1 || n > MMA_TOKENS || in % 8 != 0) {
            throw new IllegalArgumentException("gemv (tensor cores) takes 1.." + MMA_TOKENS
                    + " tokens and in % 8 == 0, got n=" + n + ", in=" + in);
        }
        aligned(x, w);
        String name = n == 1 ? "tl_gemv_mma1" : "tl_gemv_mma";
        k.launch(
                k.fn(t, name),
                (out + MMA_ROWS - 1) / MMA_ROWS,
                1,
                MMA_THREADS,
                s,
                name,
                p(x),
                p(w),
                p(y),
                i(n),
                i(in),
                i(out));
    }

    private static void aligned(long x, long w) {
        if ((x & 15) != 0 || (w & 15) != 0) {
            throw new IllegalArgumentException("gemv: x and w must be 16-byte aligned (x=0x" + Long.toHexString(x)
                    + ", w=0x" + Long.toHexString(w) + ")");
        }
    }
}
