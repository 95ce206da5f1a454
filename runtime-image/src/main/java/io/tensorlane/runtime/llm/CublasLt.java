package io.tensorlane.runtime.llm;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUstream;

/**
 * cuBLASLt through JNA, for the FP8 tensor-core linear: {@code y[n, out] = (xq · sx) · (w · sw)ᵀ} with e4m3 weights
 * and e4m3 activations, fp32 accumulation, bf16/fp16 output, and the scale layouts of {@link Fp8Scaling} (Hopper's
 * 128x128 block and 1x128 group scales since cuBLAS 12.9, or one scale per weight row and per token). One instance per
 * rank, on the rank's stream, with the workspace of its {@link Cublas} handle (capturable into CUDA graphs). A shape
 * cuBLASLt has no algorithm for is remembered and answered with {@code false}, so the caller falls back.
 */
public final class CublasLt implements AutoCloseable {
    /** Environment variable naming the cuBLASLt library file explicitly. */
    static final String ENV = "TENSORLANE_CUBLASLT_LIB";

    // cublasLt.h (CUDA 12.9 / 13)
    static final int CUDA_R_8F_E4M3 = 28;
    static final int DESC_TRANSA = 3;
    static final int DESC_TRANSB = 4;
    static final int DESC_SM_COUNT_TARGET = 15;
    static final int DESC_A_SCALE_POINTER = 17;
    static final int DESC_B_SCALE_POINTER = 18;
    static final int DESC_A_SCALE_MODE = 31;
    static final int DESC_B_SCALE_MODE = 32;
    static final int PREF_MAX_WORKSPACE_BYTES = 1;
    /** Block scales per row of the weight's 128x128 scale grid as cuBLASLt reads it (rows 16-byte aligned, zero-padded). */
    public static final int BLOCK_SCALE_ROW_MULTIPLE = 4;
    /** sizeof(cublasLtMatmulHeuristicResult_t): algo (64 bytes), workspaceSize, state, wavesCount, reserved[4]. */
    static final int HEURISTIC_RESULT_BYTES = 96;

    /**
     * How the two operands' fp32 scales are laid out (cublasLtMatmulMatrixScale_t for A = weights, B = activations);
     * activations always per token and 128 columns (VEC128_32F: [ceil(in / 128), n], token-contiguous).
     */
    public enum Fp8Scaling {
        /** Weights per 128x128 block (BLK128x128_32F: [ceil(out / 128), ceil(in / 128) padded to 4]). */
        BLOCK(5),
        /**
         * Weights per output row, that row's scale repeated for each 128 columns (VEC128_32F: [ceil(in / 128), out],
         * row-contiguous). cuBLASLt's own per-row mode (OUTER_VEC_32F, activations per token) ran 0.59-0.76x bf16 at
         * batch 2-128 on the 8B geometry (H200, 2026-12-02 17:06 UTC), this one as fast as the block mode.
         */
        ROW(4);

        /** Columns per activation scale. */
        public static final int GROUP = 128;

        final int weightMode;
        final int activationMode = 4;

        Fp8Scaling(int weightMode) {
            this.weightMode = weightMode;
        }
    }

    /** The part of the cuBLASLt C API the engine calls. */
    public interface Lib extends Library {
        int cublasLtCreate(PointerByReference handle);

        int cublasLtDestroy(Pointer handle);

        long cublasLtGetVersion();

        int cublasLtMatmulDescCreate(PointerByReference desc, int computeType, int scaleType);

        int cublasLtMatmulDescDestroy(Pointer desc);

        int cublasLtMatmulDescSetAttribute(Pointer desc, int attr, Pointer buf, long size);

        int cublasLtMatrixLayoutCreate(PointerByReference layout, int type, long rows, long cols, long ld);

        int cublasLtMatrixLayoutDestroy(Pointer layout);

        int cublasLtMatmulPreferenceCreate(PointerByReference pref);

        int cublasLtMatmulPreferenceDestroy(Pointer pref);

        int cublasLtMatmulPreferenceSetAttribute(Pointer pref, int attr, Pointer buf, long size);

        int cublasLtMatmulAlgoGetHeuristic(
                Pointer handle,
                Pointer desc,
                Pointer a,
                Pointer b,
                Pointer c,
                Pointer d,
                Pointer pref,
                int requested,
                Pointer results,
                int[] returned);

        int cublasLtMatmul(
                Pointer handle,
                Pointer desc,
                Pointer alpha,
                Pointer a,
                Pointer aLayout,
                Pointer b,
                Pointer bLayout,
                Pointer beta,
                Pointer c,
                Pointer cLayout,
                Pointer d,
                Pointer dLayout,
                Pointer algo,
                Pointer workspace,
                long workspaceBytes,
                Pointer stream);
    }

    private static volatile Lib lib;
    private static final Memory ONE = floatMemory(1f);
    private static final Memory ZERO = floatMemory(0f);

    private record Key(Fp8Scaling scaling, DType out, int n, int in, int outCols, int ldy) {}

    /**
     * One shape's descriptors and chosen algorithm ({@link #gemm}), run by {@link #run}; its key says what it was made
     * for.
     */
    public static final class Plan {
        private final Key key;
        private final Pointer desc;
        private final Pointer a;
        private final Pointer b;
        private final Pointer d;
        private final Memory algo;

        private Plan(Key key, Pointer desc, Pointer a, Pointer b, Pointer d, Memory algo) {
            this.key = key;
            this.desc = desc;
            this.a = a;
            this.b = b;
            this.d = d;
            this.algo = algo;
        }
    }

    private static final Plan UNSUPPORTED = new Plan(null, null, null, null, null, null);

    private final Pointer handle;
    private final Pointer stream;
    private final long workspace;
    private final long workspaceBytes;
    private final int smCountTarget;
    private final Map<Key, Plan> plans = new HashMap<>();
    private final Memory pointerArg = new Memory(8);
    private final Memory intArg = new Memory(4);
    private final Memory longArg = new Memory(8);
    /** Whether a shape without an algorithm was reported already. */
    private boolean refusalSaid;

    private CublasLt(Pointer handle, CUstream stream, long workspace, long workspaceBytes, int smCountTarget) {
        this.handle = handle;
        this.stream = new Pointer(Cuda.address(stream));
        this.workspace = workspace;
        this.workspaceBytes = workspaceBytes;
        this.smCountTarget = smCountTarget;
    }

    private static Memory floatMemory(float v) {
        Memory m = new Memory(4);
        m.setFloat(0, v);
        return m;
    }

    /** Candidates: {@value #ENV}, the sibling of an explicit cuBLAS file, then versions 13 and 12. */
    static List<String> candidates(String env, String cublasEnv) {
        String sibling = cublasEnv == null || cublasEnv.isBlank() || !cublasEnv.contains("libcublas.so")
                ? null
                : cublasEnv.replace("libcublas.so", "libcublasLt.so");
        return Cublas.candidates("libcublasLt", env != null && !env.isBlank() ? env : sibling);
    }

    static synchronized Lib lib() {
        if (lib == null) {
            lib = Cublas.loadFirst(
                            Lib.class,
                            candidates(System.getenv(ENV), System.getenv(Cublas.ENV)),
                            "cuBLASLt not found (libcublasLt.so.13 or .12 on the library path, the CUDA toolkit"
                                    + " folders, or " + ENV + ")")
                    .getKey();
        }
        return lib;
    }

    /** A handle for {@code stream}; the workspace and multiprocessor target as for {@link Cublas#create}. */
    public static CublasLt create(CUstream stream, long workspace, long workspaceBytes, int smCountTarget) {
        PointerByReference h = new PointerByReference();
        Cublas.check(lib().cublasLtCreate(h), "cublasLtCreate");
        return new CublasLt(h.getValue(), stream, workspace, workspaceBytes, smCountTarget);
    }

    /** cuBLASLt's version number (e.g. 130100). */
    public static long version() {
        return lib().cublasLtGetVersion();
    }

    /**
     * Tokens per step cuBLASLt's FP8 matmul with 1x128 activation scales takes come in multiples of this: on an H200
     * (cuBLAS 13, 2026-12-02) it had no algorithm for 1, 2, 3, 5 or 765 tokens and one for 4, 8, 16, 32, 128, 300
     * (the scale rows of {@code n} floats start 16-byte aligned only then).
     */
    public static final int TOKEN_MULTIPLE = 4;

    /**
     * The token rows a step of {@code n} tokens runs the GEMM with: n rounded up to {@link #TOKEN_MULTIPLE} where the
     * buffers hold {@code maxRows} rows, else n.
     */
    public static int tokenRows(int n, int maxRows) {
        int padded = (n + TOKEN_MULTIPLE - 1) / TOKEN_MULTIPLE * TOKEN_MULTIPLE;
        return padded <= maxRows ? padded : n;
    }

    /** Whether cuBLASLt's FP8 matmul takes these dimensions: 16-byte rows of e4m3 and of the output. */
    static boolean fits(int in, int out, int ldy, DType outType) {
        return in % 16 == 0 && out % 16 == 0 && (long) ldy * outType.bytes() % 16 == 0;
    }

    /**
     * The plan of {@code y[n, out]} (type {@code outType}, row stride {@code ldy}) = (xq[n, in] e4m3) · (w[out, in]
     * e4m3)ᵀ with scales in the layouts of {@code scaling}, made once per shape (the scale pointers only tell cuBLASLt
     * their alignment); null when cuBLASLt has no algorithm for it.
     */
    public Plan gemm(Fp8Scaling scaling, DType outType, int n, int in, int out, int ldy, long ws, long xs) {
        if (!fits(in, out, ldy, outType)) {
            return null;
        }
        Plan p = plan(new Key(scaling, outType, n, in, out, ldy), ws, xs);
        return p == UNSUPPORTED ? null : p;
    }

    /** Enqueues plan {@code p} on these operands: weights {@code w} with scales {@code ws}, xq with scales xs, out y. */
    public void run(Plan p, long w, long ws, long xq, long xs, long y) {
        setPointer(p.desc, DESC_A_SCALE_POINTER, ws);
        setPointer(p.desc, DESC_B_SCALE_POINTER, xs);
        Cublas.check(
                lib().cublasLtMatmul(
                                handle,
                                p.desc,
                                ONE,
                                new Pointer(w),
                                p.a,
                                new Pointer(xq),
                                p.b,
                                ZERO,
                                new Pointer(y),
                                p.d,
                                new Pointer(y),
                                p.d,
                                p.algo,
                                workspaceBytes > 0 ? new Pointer(workspace) : null,
                                workspaceBytes,
                                stream),
                "cublasLtMatmul(fp8 " + p.key + ")");
    }

    private Plan plan(Key k, long ws, long xs) {
        Plan cached = plans.get(k);
        if (cached == null) {
            cached = newPlan(k, ws, xs);
            plans.put(k, cached);
        }
        return cached;
    }

    private Plan newPlan(Key k, long ws, long xs) {
        Lib l = lib();
        PointerByReference r = new PointerByReference();
        Cublas.check(l.cublasLtMatmulDescCreate(r, Cublas.COMPUTE_32F, Cublas.CUDA_R_32F), "cublasLtMatmulDescCreate");
        Pointer desc = r.getValue();
        setInt(desc, DESC_TRANSA, Cublas.OP_T);
        setInt(desc, DESC_TRANSB, Cublas.OP_N);
        setInt(desc, DESC_A_SCALE_MODE, k.scaling().weightMode);
        setInt(desc, DESC_B_SCALE_MODE, k.scaling().activationMode);
        if (smCountTarget > 0) {
            setInt(desc, DESC_SM_COUNT_TARGET, smCountTarget);
        }
        setPointer(desc, DESC_A_SCALE_POINTER, ws);
        setPointer(desc, DESC_B_SCALE_POINTER, xs);
        // column-major: A = w as [in, out] (op T: out x in), B = xq as [in, n], D = y as [out, n] with ld ldy
        Pointer a = layout(CUDA_R_8F_E4M3, k.in(), k.outCols(), k.in());
        Pointer b = layout(CUDA_R_8F_E4M3, k.in(), k.n(), k.in());
        Pointer d = layout(Cublas.cudaType(k.out()), k.outCols(), k.n(), k.ldy());
        Cublas.check(l.cublasLtMatmulPreferenceCreate(r), "cublasLtMatmulPreferenceCreate");
        Pointer pref = r.getValue();
        longArg.setLong(0, workspaceBytes);
        Cublas.check(
                l.cublasLtMatmulPreferenceSetAttribute(pref, PREF_MAX_WORKSPACE_BYTES, longArg, 8),
                "cublasLtMatmulPreferenceSetAttribute");
        Memory results = new Memory(HEURISTIC_RESULT_BYTES);
        int[] returned = {0};
        int status = l.cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, d, d, pref, 1, results, returned);
        l.cublasLtMatmulPreferenceDestroy(pref);
        if (status != 0 || returned[0] == 0) {
            if (!refusalSaid) {
                refusalSaid = true;
                System.err.println("engine: cuBLASLt has no FP8 algorithm for " + k + " ("
                        + (status != 0 ? Cublas.statusName(status) : "no result")
                        + "); such steps take the FP8 GEMV or the dequantized weight (said once)");
            }
            l.cublasLtMatrixLayoutDestroy(a);
            l.cublasLtMatrixLayoutDestroy(b);
            l.cublasLtMatrixLayoutDestroy(d);
            l.cublasLtMatmulDescDestroy(desc);
            return UNSUPPORTED;
        }
        Memory algo = new Memory(64);
        algo.write(0, results.getByteArray(0, 64), 0, 64);
        return new Plan(k, desc, a, b, d, algo);
    }

    private Pointer layout(int type, long rows, long cols, long ld) {
        PointerByReference r = new PointerByReference();
        Cublas.check(lib().cublasLtMatrixLayoutCreate(r, type, rows, cols, ld), "cublasLtMatrixLayoutCreate");
        return r.getValue();
    }

    private void setInt(Pointer desc, int attr, int v) {
        intArg.setInt(0, v);
        Cublas.check(
                lib().cublasLtMatmulDescSetAttribute(desc, attr, intArg, 4), "cublasLtMatmulDescSetAttribute " + attr);
    }

    private void setPointer(Pointer desc, int attr, long address) {
        pointerArg.setLong(0, address);
        Cublas.check(
                lib().cublasLtMatmulDescSetAttribute(desc, attr, pointerArg, 8),
                "cublasLtMatmulDescSetAttribute " + attr);
    }

    @Override
    public void close() {
        Lib l = lib();
        for (Plan p : plans.values()) {
            if (p != UNSUPPORTED) {
                l.cublasLtMatrixLayoutDestroy(p.a);
                l.cublasLtMatrixLayoutDestroy(p.b);
                l.cublasLtMatrixLayoutDestroy(p.d);
                l.cublasLtMatmulDescDestroy(p.desc);
            }
        }
        plans.clear();
        l.cublasLtDestroy(handle);
    }
}
