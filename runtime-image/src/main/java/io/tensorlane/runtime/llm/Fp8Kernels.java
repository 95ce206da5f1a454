package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.p;
import static jcuda.driver.JCudaDriver.cuCtxGetDevice;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.WeightType;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUstream;

/**
 * The FP8-weight kernels of {@link ModelKernels} (tl_fp8.cuh): the GEMV of steps of up to {@link #MAX_TOKENS} tokens,
 * which reads each FP8 weight once for all of them and dequantizes in registers, and the dequantization to the model's
 * dtype that feeds cuBLAS in larger steps. Scales in the layout of the weight's {@link WeightType}.
 */
public final class Fp8Kernels {
    /** Output rows per block (one warp each); the kernel's kFp8Warps. */
    static final int WARPS = 8;
    /** Most tokens one GEMV launch takes; the kernel's kFp8MaxTokens. */
    static final int MAX_TOKENS = 8;

    /**
     * Most blocks of a dequantization launch (grid-stride beyond): 8 blocks of {@link ModelKernels#ELEMENTWISE_THREADS}
     * on each of an H200's 132 multiprocessors, the configuration measured (results/h200-2026-12-02-fp8-bench/).
     */
    static final int DEQUANT_MAX_BLOCKS = 8 * 132 * 8;

    private final ModelKernels k;

    Fp8Kernels(ModelKernels k) {
        this.k = k;
    }

    /** Whether the current context's GPU has FP8 (e4m3) tensor cores: compute capability 8.9 and later. */
    public static boolean tensorCoresHere() {
        jcuda.driver.CUdevice dev = new jcuda.driver.CUdevice();
        Cuda.check(cuCtxGetDevice(dev), "cuCtxGetDevice");
        int[] major = {0};
        int[] minor = {0};
        Cuda.check(
                cuDeviceGetAttribute(major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
                "cuDeviceGetAttribute(compute capability)");
        Cuda.check(
                cuDeviceGetAttribute(minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
                "cuDeviceGetAttribute(compute capability)");
        return major[0] > 8 || (major[0] == 8 && minor[0] >= 9);
    }

    /** Whether the GEMV takes this step: 1..8 tokens and rows of whole 16-byte chunks (in % 16 == 0). */
    public static boolean gemvFits(int n, int in) {
        return n >= 1 && n <= MAX_TOKENS && in > 0 && in % 16 == 0;
    }

    /**
     * y[n, out] = x[n, in] · weight[out, in]ᵀ with weight = fp8 w times its scales: on the tensor cores
     * (tl_gemv_mma[1]_fp8, x staged as f16, {@code mma}) or one warp per output row (tl_gemv[1]_fp8).
     */
    public void gemv(
            DType t,
            WeightType type,
            long x,
            long w,
            long scales,
            long y,
            int n,
            int in,
            int out,
            boolean mma,
            CUstream s) {
        ModelKernels.positive("out", out);
        if (!gemvFits(n, in)) {
            throw new IllegalArgumentException(
                    "fp8 gemv takes 1.." + MAX_TOKENS + " tokens and in % 16 == 0, got n=" + n + ", in=" + in);
        }
        if ((x & 15) != 0 || (w & 15) != 0) {
            throw new IllegalArgumentException("fp8 gemv: x and w must be 16-byte aligned");
        }
        // one token: the entries without per-token predication (warp: 8 loads in flight a lane; mma: 1-token tiles)
        String name = mma
                ? kernel(n == 1 ? "tl_gemv_mma1_fp8" : "tl_gemv_mma_fp8", type)
                : kernel(n == 1 ? "tl_gemv1_fp8" : "tl_gemv_fp8", type);
        int rowsPerBlock = mma ? GemvKernels.MMA_ROWS : WARPS;
        k.launch(
                k.fn(t, name),
                (out + rowsPerBlock - 1) / rowsPerBlock,
                1,
                mma ? GemvKernels.MMA_THREADS : WARPS * 32,
                s,
                name,
                p(x),
                p(w),
                p(scales),
                p(y),
                i(n),
                i(in),
                i(out),
                i(type.rowBlock()));
    }

    /** out[rows, cols] (type t) = fp8 w times its scales. */
    public void dequant(DType t, WeightType type, long w, long scales, long out, int rows, int cols, CUstream s) {
        ModelKernels.positive("rows", rows);
        ModelKernels.positive("cols", cols);
        long work = cols % 16 == 0 ? (long) rows * cols / 16 : (long) rows * cols;
        int threads = ModelKernels.ELEMENTWISE_THREADS;
        int blocks = (int) Math.min((work + threads - 1) / threads, DEQUANT_MAX_BLOCKS);
        String name = kernel("tl_dequant_fp8", type);
        k.launch(
                k.fn(t, name),
                blocks,
                1,
                threads,
                s,
                name,
                p(w),
                p(scales),
                p(out),
                i(rows),
                i(cols),
                i(type.rowBlock()));
    }

    /**
     * q[rows, in] e4m3 and fp32 scales of x[n, in] for the tensor-core GEMM: one scale per token and {@code group}
     * columns, amax / 448, at {@code scales[g * rows + t]}; rows n..rows-1 (padding) get zero codes and scale 1.
     */
    public void quantize(DType t, long x, long q, long scales, int n, int rows, int in, int group, CUstream s) {
        ModelKernels.positive("n", n);
        ModelKernels.positive("in", in);
        ModelKernels.positive("group", group);
        if (rows < n) {
            throw new IllegalArgumentException("quantize: rows " + rows + " < tokens " + n);
        }
        long warps = (long) rows * ((in + group - 1) / group);
        int perBlock = ModelKernels.ELEMENTWISE_THREADS / 32;
        String name = "tl_quant_fp8";
        k.launch(
                k.fn(t, name),
                (int) ((warps + perBlock - 1) / perBlock),
                1,
                ModelKernels.ELEMENTWISE_THREADS,
                s,
                name,
                p(x),
                p(q),
                p(scales),
                i(n),
                i(rows),
                i(in),
                i(group));
    }

    /**
     * The entry of an FP8 kernel family for a weight's scale layout: {@code prefix + "_block"} (both block layouts, the
     * row_block argument tells them apart) or {@code prefix + "_row"}; the one naming rule of tl_fp8.cuh,
     * tl_gemv_fused.cuh and the MoE FP8 kernels.
     */
    static String kernel(String prefix, WeightType type) {
        return switch (type) {
            case FP8_BLOCK, FP8_BLOCK_ROWS -> prefix + "_block";
            case FP8_ROW -> prefix + "_row";
            case DENSE -> throw new IllegalArgumentException(prefix + ": a dense weight has no FP8 kernel");
        };
    }
}
