package io.tensorlane.runtime.serve;

import jcuda.Pointer;
import jcuda.cudaDataType;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasComputeType;
import jcuda.jcublas.cublasGemmAlgo;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasOperation;
import jcuda.jcublas.cublasStatus;
import jcuda.runtime.cudaStream_t;

/**
 * bf16 GEMMs (fp32 accumulation) with cuBLAS through JCublas, on a rank's stream. Create and use it on the rank's
 * thread (its context current). JCublas 12.0.0 loads {@code libcublas.so.12}; where that library is missing the
 * constructor fails with a message saying so ({@code serve --gemm none} runs the allreduces alone).
 */
final class Gemm implements AutoCloseable {
    private static final Pointer ONE = Pointer.to(new float[] {1f});
    private static final Pointer ZERO = Pointer.to(new float[] {0f});
    private final cublasHandle handle = new cublasHandle();

    private Gemm() {}

    static Gemm create(CUstream stream) {
        Gemm g = new Gemm();
        try {
            JCublas2.setExceptionsEnabled(false);
        } catch (UnsatisfiedLinkError e) {
            throw new IllegalStateException(
                    "cuBLAS is not available (JCublas 12 needs libcublas.so.12 and libcublasLt.so.12 on "
                            + "the library path): "
                            + e.getMessage().lines().findFirst().orElse("") + "; run serve with --gemm none to "
                            + "drive the allreduces without GEMMs");
        }
        check(JCublas2.cublasCreate(g.handle), "cublasCreate");
        check(JCublas2.cublasSetStream(g.handle, new cudaStream_t(stream)), "cublasSetStream");
        return g;
    }

    /** Column-major {@code C(m x n) = A(m x k) · B(k x n)}, all bf16, fp32 accumulation. */
    void bf16(int m, int n, int k, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c) {
        check(
                JCublas2.cublasGemmEx(
                        handle,
                        cublasOperation.CUBLAS_OP_N,
                        cublasOperation.CUBLAS_OP_N,
                        m,
                        n,
                        k,
                        ONE,
                        a,
                        cudaDataType.CUDA_R_16BF,
                        m,
                        b,
                        cudaDataType.CUDA_R_16BF,
                        k,
                        ZERO,
                        c,
                        cudaDataType.CUDA_R_16BF,
                        m,
                        cublasComputeType.CUBLAS_COMPUTE_32F,
                        cublasGemmAlgo.CUBLAS_GEMM_DEFAULT),
                "cublasGemmEx(" + m + "x" + n + "x" + k + ")");
    }

    private static void check(int status, String what) {
        if (status != cublasStatus.CUBLAS_STATUS_SUCCESS) {
            throw new IllegalStateException(what + " failed: " + cublasStatus.stringFor(status));
        }
    }

    @Override
    public void close() {
        JCublas2.cublasDestroy(handle);
    }
}
