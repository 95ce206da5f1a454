package io.tensorlane.runtime.llm;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUstream;

/**
 * cuBLAS through JNA: whichever {@code libcublas.so.13} or {@code .12} the machine has (JCublas is built for 12 only).
 * One instance per rank: a handle bound to the rank's stream with a fixed workspace (so GEMMs can be captured into
 * CUDA graphs). Create, use and close it on the rank's thread (its context current).
 */
public final class Cublas implements AutoCloseable {
    /** Environment variable naming the cuBLAS library file explicitly. */
    public static final String ENV = "TENSORLANE_CUBLAS_LIB";

    static final int OP_N = 0;
    static final int OP_T = 1;
    static final int CUDA_R_32F = 0;
    static final int CUDA_R_16F = 2;
    static final int CUDA_R_16BF = 14;
    static final int COMPUTE_32F = 68;
    static final int GEMM_DEFAULT = -1;

    /** The part of the cuBLAS C API the engine calls. */
    public interface Lib extends Library {
        int cublasCreate_v2(PointerByReference handle);

        int cublasDestroy_v2(Pointer handle);

        int cublasSetStream_v2(Pointer handle, Pointer stream);

        int cublasSetWorkspace_v2(Pointer handle, Pointer workspace, long bytes);

        int cublasGetVersion_v2(Pointer handle, int[] version);

        int cublasSetSmCountTarget(Pointer handle, int smCountTarget);

        int cublasGemmEx(
                Pointer handle,
                int transa,
                int transb,
                int m,
                int n,
                int k,
                Pointer alpha,
                Pointer a,
                int atype,
                int lda,
                Pointer b,
                int btype,
                int ldb,
                Pointer beta,
                Pointer c,
                int ctype,
                int ldc,
                int computeType,
                int algo);

        /** cuBLAS 12.5+: problems of different sizes in one call; per-group arrays on the host, A/B/C pointers on the GPU. */
        int cublasGemmGroupedBatchedEx(
                Pointer handle,
                int[] transa,
                int[] transb,
                int[] m,
                int[] n,
                int[] k,
                float[] alpha,
                Pointer aarray,
                int atype,
                int[] lda,
                Pointer barray,
                int btype,
                int[] ldb,
                float[] beta,
                Pointer carray,
                int ctype,
                int[] ldc,
                int groupCount,
                int[] groupSize,
                int computeType);
    }

    private static volatile Lib lib;
    private static volatile String libSource;
    private static final Memory ONE = floatMemory(1f);
    private static final Memory ZERO = floatMemory(0f);

    private final Pointer handle;

    private Cublas(Pointer handle) {
        this.handle = handle;
    }

    private static Memory floatMemory(float v) {
        Memory m = new Memory(4);
        m.setFloat(0, v);
        return m;
    }

    /** Library candidates in search order (pure, for tests and messages). */
    static List<String> candidates(String env) {
        return candidates("libcublas", env);
    }

    /**
     * Candidates for {@code base} ({@code libcublas} or {@code libcublasLt}) in search order: {@code env} first, then
     * versions 13 and 12 by name and in the CUDA toolkit's folders.
     */
    static List<String> candidates(String base, String env) {
        List<String> out = new ArrayList<>();
        if (env != null && !env.isBlank()) {
            out.add(env);
        }
        for (String v : new String[] {"13", "12"}) {
            out.add(base + ".so." + v);
            out.add("/usr/local/cuda/lib64/" + base + ".so." + v);
            out.add("/usr/local/cuda-" + v + ".0/targets/x86_64-linux/lib/" + base + ".so." + v);
            out.add("/usr/local/cuda/targets/x86_64-linux/lib/" + base + ".so." + v);
        }
        return out;
    }

    /** The first of {@code candidates} that loads as {@code type}, with its name; an error listing what was tried. */
    static <T extends Library> Map.Entry<T, String> loadFirst(Class<T> type, List<String> candidates, String what) {
        List<String> tried = new ArrayList<>();
        for (String c : candidates) {
            if (c.contains("/") && !Files.exists(Path.of(c))) {
                continue;
            }
            try {
                return Map.entry(Native.load(c, type), c);
            } catch (UnsatisfiedLinkError e) {
                tried.add(c + " (" + e.getMessage().lines().findFirst().orElse("") + ")");
            }
        }
        throw new IllegalStateException(what + "; tried " + (tried.isEmpty() ? candidates : tried));
    }

    static synchronized Lib lib() {
        if (lib == null) {
            Map.Entry<Lib, String> l = loadFirst(
                    Lib.class,
                    candidates(System.getenv(ENV)),
                    "cuBLAS not found (libcublas.so.13 or .12 on the library path, the CUDA toolkit folders, or " + ENV
                            + ")");
            lib = l.getKey();
            libSource = l.getValue();
        }
        return lib;
    }

    /** Which library file was loaded (after the first {@link #create}). */
    public static String source() {
        return libSource;
    }

    /**
     * A handle on {@code stream} with {@code workspaceBytes} of device memory at {@code workspace} for its kernels;
     * {@code smCountTarget} > 0 makes cuBLAS size its grids for that many multiprocessors.
     */
    public static Cublas create(CUstream stream, long workspace, long workspaceBytes, int smCountTarget) {
        Lib l = lib();
        PointerByReference h = new PointerByReference();
        check(l.cublasCreate_v2(h), "cublasCreate");
        Cublas c = new Cublas(h.getValue());
        try {
            check(l.cublasSetStream_v2(c.handle, new Pointer(Cuda.address(stream))), "cublasSetStream");
            check(
                    l.cublasSetWorkspace_v2(
                            c.handle, workspaceBytes > 0 ? new Pointer(workspace) : null, workspaceBytes),
                    "cublasSetWorkspace");
            if (smCountTarget > 0) {
                check(l.cublasSetSmCountTarget(c.handle, smCountTarget), "cublasSetSmCountTarget");
            }
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /** cuBLAS's version number (e.g. 130100), or -1. */
    public int version() {
        int[] v = {-1};
        lib().cublasGetVersion_v2(handle, v);
        return v[0];
    }

    static int cudaType(DType t) {
        return switch (t) {
            case bf16 -> CUDA_R_16BF;
            case fp16 -> CUDA_R_16F;
            case fp32 -> CUDA_R_32F;
        };
    }

    /**
     * A Linear layer on row-major tensors: {@code y[tokens, out] = x[tokens, in] · w[out, in]ᵀ} (w as Hugging Face stores
     * it), inputs of type {@code t}, fp32 accumulation, output of type {@code outType}; {@code ldy} is y's row stride in
     * elements (usually {@code out}).
     */
    public void linear(DType t, long x, long w, long y, DType outType, int tokens, int in, int out, int ldy) {
        // Column-major view: y^T (out x tokens) = op_T(w as in x out) · x^T (in x tokens).
        check(
                lib().cublasGemmEx(
                                handle,
                                OP_T,
                                OP_N,
                                out,
                                tokens,
                                in,
                                ONE,
                                new Pointer(w),
                                cudaType(t),
                                in,
                                new Pointer(x),
                                cudaType(t),
                                in,
                                ZERO,
                                new Pointer(y),
                                cudaType(outType),
                                ldy,
                                COMPUTE_32F,
                                GEMM_DEFAULT),
                "cublasGemmEx(linear " + tokens + "x" + in + " -> " + out + ")");
    }

    /**
     * {@code groups} linears in one call, problem i being {@link #linear}'s {@code y_i[tokens[i], out] = x_i[tokens[i],
     * in] · w_iᵀ} in type {@code t} (output too); {@code pointers} is a device array of 3 x groups addresses: the w_i,
     * then the x_i, then the y_i. Returns false, having enqueued nothing, when the library has no grouped GEMM (cuBLAS
     * before 12.5).
     */
    public boolean groupedLinear(DType t, int groups, int[] tokens, int in, int out, long pointers) {
        if (groups == 0) {
            return true;
        }
        int[] opT = new int[groups];
        int[] opN = new int[groups];
        int[] ms = new int[groups];
        int[] ks = new int[groups];
        int[] ldo = new int[groups];
        int[] one = new int[groups];
        float[] alpha = new float[groups];
        float[] beta = new float[groups];
        java.util.Arrays.fill(opT, OP_T);
        java.util.Arrays.fill(opN, OP_N);
        java.util.Arrays.fill(ms, out);
        java.util.Arrays.fill(ks, in);
        java.util.Arrays.fill(ldo, out);
        java.util.Arrays.fill(one, 1);
        java.util.Arrays.fill(alpha, 1f);
        int[] ldi = ks;
        int type = cudaType(t);
        int status;
        try {
            status = lib().cublasGemmGroupedBatchedEx(
                            handle,
                            opT,
                            opN,
                            ms,
                            java.util.Arrays.copyOf(tokens, groups),
                            ks,
                            alpha,
                            new Pointer(pointers),
                            type,
                            ldi,
                            new Pointer(pointers + 8L * groups),
                            type,
                            ldi,
                            beta,
                            new Pointer(pointers + 16L * groups),
                            type,
                            ldo,
                            groups,
                            one,
                            COMPUTE_32F);
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
        check(status, "cublasGemmGroupedBatchedEx(" + groups + " linears " + in + " -> " + out + ")");
        return true;
    }

    static void check(int status, String what) {
        if (status != 0) {
            throw new IllegalStateException(
                    what + " failed: cuBLAS status " + status + " (" + statusName(status) + ")");
        }
    }

    static String statusName(int s) {
        return switch (s) {
            case 1 -> "NOT_INITIALIZED";
            case 3 -> "ALLOC_FAILED";
            case 7 -> "INVALID_VALUE";
            case 8 -> "ARCH_MISMATCH";
            case 11 -> "MAPPING_ERROR";
            case 13 -> "EXECUTION_FAILED";
            case 14 -> "INTERNAL_ERROR";
            case 15 -> "NOT_SUPPORTED";
            default -> "status " + s;
        };
    }

    @Override
    public void close() {
        lib().cublasDestroy_v2(handle);
    }
}
