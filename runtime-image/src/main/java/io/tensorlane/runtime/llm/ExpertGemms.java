package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * The per-expert GEMMs of a MoE layer's long steps ({@link MoeMlp}): the pairs already grouped by expert (rows
 * [offsets[e], offsets[e+1]) of x belong to expert e), y rows = x rows · expert e's [out, in] slice of a stacked weight
 * ([experts x out, in]). Experts in the model's dtype: one cuBLAS GEMM per expert with rows, or one grouped cuBLAS call
 * ({@link KernelChoices#moeGroupedGemm}). FP8 experts: on FP8 tensor cores in one launch ({@link Fp8ExpertGemm}, the
 * default) where the GPU and the geometry allow it; else ({@link KernelChoices#MOE_FP8_GEMM_ENV} off) each routed
 * expert's slice (only those with rows) is dequantized into a scratch of the model's dtype, then its cuBLAS GEMM: on
 * one stream, so one scratch serves every expert in turn.
 */
final class ExpertGemms {
    private final ModelKernels kernels;
    private final Cublas blas;
    private final DType dt;
    private final int experts;
    /** One expert's largest projection in the model's dtype (0 when the experts are not FP8 or take {@link #fp8}). */
    private final long scratch;
    /** FP8 experts on tensor cores (null: not FP8, or dequantized for cuBLAS). */
    private final Fp8ExpertGemm fp8;

    private final CUdeviceptr pointers;
    /** Per active expert: its rows, and the w / x / y addresses (three blocks of {@code experts} entries). */
    private final int[] tokens;

    private final long[] ptrs;
    /** Whether cuBLAS's grouped GEMM is used (cleared when cuBLAS has none). */
    private boolean groupedGemm;

    /**
     * @param scratch device buffer for one dequantized expert projection (0: the experts are in the model's dtype, or
     *     take {@code fp8})
     * @param pointers device buffer of 3 x experts addresses for the grouped GEMM
     * @param fp8 FP8 experts' GEMM on tensor cores (null: none)
     */
    ExpertGemms(
            ModelKernels kernels,
            Cublas blas,
            DType dt,
            int experts,
            long scratch,
            CUdeviceptr pointers,
            boolean groupedGemm,
            Fp8ExpertGemm fp8) {
        this.kernels = kernels;
        this.blas = blas;
        this.dt = dt;
        this.experts = experts;
        this.scratch = scratch;
        this.pointers = pointers;
        this.groupedGemm = groupedGemm;
        this.fp8 = fp8;
        this.tokens = new int[experts];
        this.ptrs = new long[3 * experts];
    }

    /**
     * y[offsets[e]..offsets[e+1], out] = x rows of the same range · w's expert e slice [out, in]ᵀ for every expert with
     * rows; x and y in the model's dtype.
     */
    void run(RankWeights.Weight w, int[] offsets, long x, int in, long y, int out, CUstream s) {
        if (w.type().fp8()) {
            if (fp8 != null) {
                fp8.run(w, offsets, x, in, y, out, s);
            } else {
                dequantized(w, offsets, x, in, y, out, s);
            }
            return;
        }
        long e = dt.bytes();
        long wElems = (long) out * in;
        int groups = 0;
        for (int x0 = 0; x0 < experts; x0++) {
            int rows = offsets[x0 + 1] - offsets[x0];
            if (rows > 0) {
                tokens[groups] = rows;
                ptrs[groups] = w.address() + x0 * wElems * e;
                ptrs[experts + groups] = x + (long) offsets[x0] * in * e;
                ptrs[2 * experts + groups] = y + (long) offsets[x0] * out * e;
                groups++;
            }
        }
        if (groupedGemm) {
            long[] packed = new long[3 * groups];
            for (int i = 0; i < 3; i++) {
                System.arraycopy(ptrs, i * experts, packed, i * groups, groups);
            }
            Cuda.check(
                    cuMemcpyHtoDAsync(pointers, Pointer.to(packed), 8L * packed.length, s),
                    "cuMemcpyHtoDAsync(grouped GEMM pointers)");
            if (blas.groupedLinear(dt, groups, tokens, in, out, Cuda.address(pointers))) {
                return;
            }
            groupedGemm = false; // this cuBLAS has no grouped GEMM: one per expert from now on
        }
        for (int i = 0; i < groups; i++) {
            blas.linear(dt, ptrs[experts + i], ptrs[i], ptrs[2 * experts + i], dt, tokens[i], in, out, out);
        }
    }

    private void dequantized(RankWeights.Weight w, int[] offsets, long x, int in, long y, int out, CUstream s) {
        if (scratch == 0) {
            throw new IllegalStateException("FP8 experts need a dequantization scratch");
        }
        long e = dt.bytes();
        for (int x0 = 0; x0 < experts; x0++) {
            int rows = offsets[x0 + 1] - offsets[x0];
            if (rows == 0) {
                continue;
            }
            long wAt = w.address() + (long) x0 * out * in; // e4m3: one byte an element
            long sAt = w.scales() + 4L * w.type().scaleOffset((long) x0 * out, in);
            kernels.fp8().dequant(dt, w.type(), wAt, sAt, scratch, out, in, s);
            blas.linear(
                    dt,
                    x + (long) offsets[x0] * in * e,
                    scratch,
                    y + (long) offsets[x0] * out * e,
                    dt,
                    rows,
                    in,
                    out,
                    out);
        }
    }
}
