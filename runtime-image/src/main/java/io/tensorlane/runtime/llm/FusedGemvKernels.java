package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.f;
import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.WeightType;
import jcuda.driver.CUstream;

/**
 * The one-token linears of {@link ModelKernels} with the residual stream folded in (tl_gemv_fused.cuh), for dense and
 * FP8 weights: {@link #norm} computes x = RMSNorm(residual) · gamma in every block and multiplies it by the weight
 * (optionally a fused gate/up weight followed by silu(gate) · up), {@link #residual} adds a linear's output to the fp32
 * residual. Each gives the bits of the kernels it replaces (tl_add_rmsnorm, tl_gemv / tl_gemv1_fp8_*, tl_silu_mul).
 */
public final class FusedGemvKernels {
    /** Threads of a norm kernel's block (its norm is tl_add_rmsnorm's, on as many threads); the kernel's kFuseThreads. */
    static final int NORM_THREADS = 512;
    /** Output rows a norm block takes at once (a warp each). */
    static final int NORM_WARPS = NORM_THREADS / 32;
    /** The widest input of a norm kernel (its x staged in shared memory); the kernel's kFuseMaxIn. */
    public static final int MAX_IN = 8192;

    private final ModelKernels k;
    private final FusedGemvVariant variant;
    private int normGridCap;

    FusedGemvKernels(ModelKernels k, FusedGemvVariant variant) {
        this.k = k;
        this.variant = variant;
    }

    /** The inner loop these kernels take ({@value FusedGemvVariant#ENV} for the engine's). */
    public FusedGemvVariant variant() {
        return variant;
    }

    /** These kernels with the inner loop {@code v} (kernelcheck and bench-fused run every variant). */
    public FusedGemvKernels with(FusedGemvVariant v) {
        return v == variant ? this : new FusedGemvKernels(k, v);
    }

    /** Whether {@link #residual} takes a linear with rows of {@code in} elements of this weight type. */
    public static boolean fits(WeightType type, int in) {
        return in > 0 && in % (type.fp8() ? 16 : 8) == 0;
    }

    /** Whether {@link #norm} takes it: {@link #fits} and x staged in shared memory ({@value #MAX_IN} elements). */
    public static boolean normFits(WeightType type, int in) {
        return fits(type, in) && in <= MAX_IN;
    }

    /**
     * y[out] = w · (RMSNorm(r) · gamma) for one token (r fp32 [in], unchanged); with {@code silu} w is a fused gate/up
     * weight of 2 {@code out} rows and y[j] = silu(gate_j) · up_j. {@code scales} 0 for a dense weight.
     */
    public void norm(
            DType t,
            WeightType type,
            long r,
            long gamma,
            float eps,
            long w,
            long scales,
            long y,
            int in,
            int out,
            boolean silu,
            CUstream s) {
        check(type, in, out, w, scales);
        if (!normFits(type, in)) {
            throw new IllegalArgumentException("fused gemv: the norm kernels stage x in shared memory, at most "
                    + MAX_IN + " elements, got " + in);
        }
        String name = name(silu ? "tl_gemv_norm_silu" : "tl_gemv_norm", type, variant);
        int grid = Math.min((out + NORM_WARPS - 1) / NORM_WARPS, gridCap());
        k.launch(
                k.fn(t, name),
                grid,
                1,
                NORM_THREADS,
                s,
                name,
                p(r),
                p(gamma),
                f(eps),
                p(w),
                p(scales),
                i(type.rowBlock()),
                p(y),
                i(in),
                i(out));
    }

    /** r[out] += float(T(w · x)) for one token (x [in] in T, r fp32): a linear and the residual add after it. */
    public void residual(DType t, WeightType type, long x, long w, long scales, long r, int in, int out, CUstream s) {
        check(type, in, out, w, scales);
        if ((x & 15) != 0) {
            throw new IllegalArgumentException("fused gemv: x must be 16-byte aligned");
        }
        String name = name("tl_gemv_res", type, variant);
        k.launch(
                k.fn(t, name),
                (out + GemvKernels.WARPS - 1) / GemvKernels.WARPS,
                1,
                GemvKernels.WARPS * 32,
                s,
                name,
                p(x),
                p(w),
                p(scales),
                i(type.rowBlock()),
                p(r),
                i(in),
                i(out));
    }

    private static void check(WeightType type, int in, int out, long w, long scales) {
        ModelKernels.positive("out", out);
        if (!fits(type, in)) {
            throw new IllegalArgumentException(
                    "fused gemv takes rows of whole 16-byte chunks, got in=" + in + " (" + type + ")");
        }
        if ((w & 15) != 0) {
            throw new IllegalArgumentException("fused gemv: w must be 16-byte aligned");
        }
        if (type.fp8() && scales == 0) {
            throw new IllegalArgumentException("fused gemv: an FP8 weight needs its scales");
        }
    }

    /** The kernel of {@code prefix} for this weight type and inner loop (Kernels.MODEL_TYPED_KERNELS names them all). */
    static String name(String prefix, WeightType type, FusedGemvVariant v) {
        return (type.fp8() ? Fp8Kernels.kernel(prefix + "_fp8", type) : prefix) + v.suffix(type);
    }

    /** Blocks of a norm launch: two a multiprocessor of the current device (each stages x once for many rows). */
    private int gridCap() {
        if (normGridCap == 0) {
            normGridCap = Math.max(1, 2 * Cuda.multiprocessorsOfCurrentDevice());
        }
        return normGridCap;
    }
}
