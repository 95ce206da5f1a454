package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.ScaleGrid;
import jcuda.driver.CUstream;

/**
 * The linears of one rank whose weights are FP8, by step size:
 * <ul>
 *   <li>at least {@link KernelChoices#fp8TensorMinTokens} tokens, on a GPU and a scale layout cuBLASLt takes: FP8
 *       tensor cores, the activations quantized per token and 128 columns into e4m3 first
 *       (W8A8, as the checkpoints' dynamic activation scheme intends);
 *   <li>else up to 8 tokens: the FP8 GEMV (W8A16, the weight dequantized in registers; on the tensor cores where
 *       {@link KernelChoices#gemvMma} takes the weight's type);
 *   <li>else: the weight dequantized to the model's dtype into a scratch buffer, then cuBLAS.
 * </ul>
 * Allocated on the rank's thread with its buffers in the {@link RankModel#ACTIVATIONS} phase.
 */
final class Fp8Linear implements AutoCloseable {
    private final ModelKernels kernels;
    private final Cublas blas;
    private final DType dt;
    private final GemvPolicy gemv;
    private final GemvMma mma;
    private final int tensorMinTokens;
    /** The model-dtype copy of a weight for cuBLAS. */
    private final long scratch;
    /** null: no tensor-core path (switched off, or cuBLASLt is not there). */
    private final CublasLt lt;
    /** e4m3 activations [maxTokens, maxIn] and their scales [ceil(maxIn / 128), maxTokens]. */
    private final long xq;

    private final int maxTokens;

    private final long xs;

    /**
     * {@code scratchElements}: the largest FP8 weight; {@code maxIn}: the widest linear input; the workspace and
     * multiprocessor target are the rank's cuBLAS ones.
     */
    Fp8Linear(
            DeviceMemory mem,
            ModelKernels kernels,
            Cublas blas,
            DType dt,
            KernelChoices choices,
            long scratchElements,
            int maxTokens,
            int maxIn,
            CUstream stream,
            long workspace,
            RankModel.GemmShare share) {
        this.kernels = kernels;
        this.blas = blas;
        this.dt = dt;
        this.gemv = choices.gemv();
        this.mma = choices.gemvMma();
        this.tensorMinTokens = choices.fp8TensorMinTokens();
        this.maxTokens = maxTokens;
        this.scratch = Cuda.address(
                mem.alloc(RankModel.ACTIVATIONS, "fp8 dequantized weight", dt.bytes() * scratchElements, false));
        CublasLt handle = null;
        if (tensorMinTokens > 0 && tensorMinTokens <= maxTokens) {
            try {
                handle = CublasLt.create(stream, workspace, share.workspaceBytes(), share.smCountTarget());
            } catch (RuntimeException | UnsatisfiedLinkError e) {
                System.err.println("engine: no FP8 tensor-core GEMM (" + e.getMessage()
                        + "); FP8 weights are dequantized for cuBLAS in steps the GEMV does not take");
            }
        }
        this.lt = handle;
        if (lt != null) {
            int groups = ScaleGrid.groups(maxIn, CublasLt.Fp8Scaling.GROUP);
            xq = Cuda.address(mem.alloc(RankModel.ACTIVATIONS, "fp8 activations", (long) maxTokens * maxIn, false));
            xs = Cuda.address(
                    mem.alloc(RankModel.ACTIVATIONS, "fp8 activation scales", 4L * maxTokens * groups, false));
        } else {
            xq = 0;
            xs = 0;
        }
    }

    /**
     * y[n, out] = x[n, in] · w[out, in]ᵀ for an FP8 weight {@code w} (x and y in the model's dtype). On tensor cores
     * the step runs {@link CublasLt#tokenRows} rows: y's rows past n are written (products of zero codes), not read.
     */
    void linear(GemvPolicy.Linear l, long x, RankWeights.Weight w, long y, int n, int in, int out, CUstream s) {
        CublasLt.Fp8Scaling scaling = w.gemmScaling();
        int rows = CublasLt.tokenRows(n, maxTokens);
        CublasLt.Plan plan = lt != null && scaling != null && n >= tensorMinTokens
                ? lt.gemm(scaling, dt, rows, in, out, out, w.gemmScales(), xs)
                : null;
        if (plan != null) {
            kernels.fp8().quantize(dt, x, xq, xs, n, rows, in, CublasLt.Fp8Scaling.GROUP, s);
            lt.run(plan, w.address(), w.gemmScales(), xq, xs, y);
        } else if (gemv.linears().contains(l) && Fp8Kernels.gemvFits(n, in)) {
            kernels.fp8().gemv(dt, w.type(), x, w.address(), w.scales(), y, n, in, out, mma.uses(w.type()), s);
        } else {
            kernels.fp8().dequant(dt, w.type(), w.address(), w.scales(), scratch, out, in, s);
            blas.linear(dt, x, scratch, y, dt, n, in, out, out);
        }
    }

    @Override
    public void close() {
        if (lt != null) {
            lt.close();
        }
    }
}
