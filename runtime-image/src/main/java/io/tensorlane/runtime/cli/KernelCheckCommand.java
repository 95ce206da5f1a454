package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetCount;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Fatbin;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.ModelReference;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUstream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Correctness of the model kernels (tl_model.cu) on one GPU against fp64 host references ({@link ModelReference}).
 *
 * <p>Every case uses fresh random inputs in the element type, fills each output buffer with 0xFF bytes first (NaN in
 * bf16/fp16/fp32, -1 in int32: an element the kernel forgot stays NaN and fails), runs the kernel, copies back and
 * compares element by element with the bound {@code |out - ref| <= u*|ref| + kappa*M} where u is the unit roundoff of
 * the output type (one final rounding), M the magnitude of the case's values and kappa a small allowance for the fp32
 * arithmetic inside the kernel. Copies (embed, gather) and argmax must match exactly.
 */
@Command(
        name = "kernelcheck",
        mixinStandardHelpOptions = true,
        description =
                "Check the model kernels (embed, add_rmsnorm, qkv_rope, attention, silu_mul, gather_rows, gemv, gemv_fp8, "
                        + "dequant_fp8, sample; qkv_rope and attention also over the FP8 KV cache; the fused one-token "
                        + "linears gemv_norm, gemv_norm_silu, gemv_res bit for bit against the kernels they fold; attention_rope, the decode attention with the "
                        + "rope and KV write folded in, bit for bit against qkv_rope + attention) on one GPU "
                        + "against fp64 host references: random inputs, poisoned outputs; prints one line per case "
                        + "'kernel dtype case maxAbsErr maxRelErr PASS|FAIL' and exits 0 only if every case passes.")
public final class KernelCheckCommand implements Callable<Integer> {
    /** fp32 allowance (relative to the case's magnitude) for elementwise kernels, norms and RoPE. */
    static final double KAPPA = 1e-5;
    /** fp32 allowance for attention (sums over up to a few hundred keys, exp2 approximation). */
    static final double KAPPA_ATTENTION = 4e-5;

    @Spec
    CommandSpec spec;

    @Option(names = "--device", defaultValue = "0", description = "GPU ordinal (default ${DEFAULT-VALUE}).")
    int device;

    @Option(
            names = "--dtypes",
            split = ",",
            defaultValue = "bf16,fp16",
            description = "Element types (default ${DEFAULT-VALUE}).")
    List<String> dtypes;

    @Option(names = "--seed", defaultValue = "20261130", description = "Random seed (default ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--only", description = "Run only the guarded cases whose kernel name matches this regex.")
    java.util.regex.Pattern only;

    /** One checked case. */
    record Result(String kernel, String dtype, String name, double maxAbs, double maxRel, boolean pass) {
        static Result of(String kernel, DType t, String name, KernelCheckMath.Stat s) {
            return new Result(kernel, t.name(), name, s.maxAbs(), s.maxRel(), s.pass());
        }

        String line() {
            return String.format(
                    java.util.Locale.ROOT,
                    "%-14s %-5s %-40s %.3e %.3e %s",
                    kernel,
                    dtype,
                    name,
                    maxAbs,
                    maxRel,
                    pass ? "PASS" : "FAIL");
        }
    }

    private final List<Result> results = new ArrayList<>();
    /** Whether the routing cases ran (once, not per element type). */
    private boolean routed;

    private PrintWriter out;
    private ModelKernels k;
    private CUstream stream;
    private SplittableRandom rnd;

    @Override
    public Integer call() {
        out = spec.commandLine().getOut();
        List<DType> types = dtypes.stream().map(DType::parse).toList();
        for (DType t : types) {
            if (t == DType.fp32) {
                throw new IllegalArgumentException("the model kernels take bf16 or fp16, not fp32");
            }
        }
        if (!Kernels.modelFatbinPresent()) {
            out.println("kernelcheck: " + Kernels.MODEL_FATBIN_RESOURCE
                    + " is missing (kernels built with -Dtensorlane.skipNvcc?)");
            out.flush();
            return ExitCodes.RUNTIME;
        }
        out.println("model kernels: " + Fatbin.entries(Kernels.modelFatbin()));
        Cuda.init(); // throws CudaUnavailableException (clear message, exit code RUNTIME) without a GPU
        int[] count = {0};
        Cuda.check(cuDeviceGetCount(count), "cuDeviceGetCount");
        if (device < 0 || device >= count[0]) {
            throw new IllegalArgumentException("--device " + device + " but " + count[0] + " GPU(s) visible");
        }
        CUdevice dev = new CUdevice();
        Cuda.check(cuDeviceGet(dev, device), "cuDeviceGet");
        byte[] name = new byte[256];
        cuDeviceGetName(name, name.length, dev);
        out.println("GPU " + device + ": "
                + new String(name, java.nio.charset.StandardCharsets.US_ASCII)
                        .trim()
                        .replace("\0", ""));
        CUcontext ctx = new CUcontext();
        Cuda.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
        try {
            Cuda.check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
            stream = new CUstream();
            Cuda.check(cuStreamCreate(stream, 0), "cuStreamCreate");
            rnd = new SplittableRandom(seed);
            out.printf(
                    "seed %d; pass: every element finite and |out-ref| <= u*|ref| + kappa*M (u: unit roundoff of the output type, "
                            + "M: magnitude of the case, kappa %.0e, attention %.0e); copies and greedy sampling exact, seeded sampling by a chi-square test at p = 1e-4; outputs poisoned with 0xFF first%n",
                    seed, KAPPA, KAPPA_ATTENTION);
            out.println("kernel         dtype case                                     maxAbsErr maxRelErr result");
            try (ModelKernels kernels = new ModelKernels()) {
                k = kernels;
                for (DType t : types) {
                    runAll(t);
                }
                new KernelCheckSamplingCases(k, stream, rnd, this::sync, out, this::add).all(this::guard);
                new KernelCheckL2Prefetch(k, stream, rnd, this::sync, this::add).all(this::guard);
            } finally {
                cuStreamDestroy(stream);
            }
        } finally {
            cuDevicePrimaryCtxRelease(dev);
        }
        long failed = results.stream().filter(r -> !r.pass()).count();
        out.printf("kernelcheck: %d passed, %d failed%n", results.size() - failed, failed);
        out.flush();
        return failed == 0 ? ExitCodes.OK : ExitCodes.CHECK_FAILED;
    }

    private void runAll(DType t) {
        KernelCheckLayers lc = new KernelCheckLayers(k, stream, rnd, this::sync, out, this::add);
        for (int hidden : new int[] {512, 4096}) {
            guard("embed", t, "hidden=" + hidden, () -> lc.embedCase(t, hidden));
        }
        for (int hidden : new int[] {512, 4096}) {
            for (int mode = 0; mode <= 2; mode++) {
                int m = mode;
                guard("add_rmsnorm", t, "hidden=" + hidden + ",mode=" + mode, () -> lc.rmsnormCase(t, hidden, m));
            }
        }
        for (int hd : new int[] {64, 128}) {
            for (int variant = 0; variant < 4; variant++) {
                boolean bias = (variant & 1) != 0;
                boolean norm = (variant & 2) != 0;
                guard(
                        "qkv_rope",
                        t,
                        "hd=" + hd + ",bias=" + bias + ",qknorm=" + norm,
                        () -> lc.ropeCase(t, hd, bias, norm));
            }
        }
        // SHUFFLED, 39 query tokens. Split-key kernel at head dim 64/128 (256), key slices: {8,2} 4 (4), {4,4} 2 (2),
        // {16,2} 2 (1), {12,1} 3 (2), {32,8} 1 (1): one slice writes the output without the combine kernel. Head dim
        // 96: the
        // per-head kernel. PREFILL (head dims 64, 128): 6 tensor-core tiles and 12 tokens left to the split-key kernel.
        KernelCheckAttention ac = new KernelCheckAttention(k, stream, rnd, this::sync);
        int[][] headConfigs = {{8, 2}, {4, 4}, {16, 2}, {12, 1}, {32, 8}};
        for (KernelCheckAttention.Layout layout : KernelCheckAttention.Layout.values()) {
            for (int[] hc : headConfigs) {
                for (int hd : layout == KernelCheckAttention.Layout.PREFILL
                        ? new int[] {64, 128}
                        : new int[] {64, 96, 128, 256}) {
                    for (double sharp : new double[] {1, 8}) {
                        String nm = (layout == KernelCheckAttention.Layout.PREFILL ? "prefill," : "") + "hq=" + hc[0]
                                + ",hk=" + hc[1] + ",hd=" + hd + ",scale=" + (int) sharp + "/sqrt(hd)";
                        guard("attention", t, nm, () -> {
                            KernelCheckAttention.Outcome o =
                                    ac.attention(t, hc[0], hc[1], hd, sharp / Math.sqrt(hd), layout);
                            add(Result.of(
                                    "attention",
                                    t,
                                    nm + (o.tiles() > 0 ? ",tiles=" + o.tiles() + "+" + o.rest() : ""),
                                    o.stat()));
                        });
                        if (hd % 64 == 0) { // the split-key kernel's head dims: its slices merged by their last block
                            guard(
                                    "attention_fused_combine",
                                    t,
                                    nm,
                                    () -> add(Result.of(
                                            "attention_fused_combine",
                                            t,
                                            nm,
                                            ac.fusedCombine(t, hc[0], hc[1], hd, sharp / Math.sqrt(hd), layout))));
                        }
                    }
                }
            }
        }
        guard("silu_mul", t, "n=5,inter=1000", () -> lc.siluCase(t));
        guard("gather_rows", t, "m=6,cols=700", () -> lc.gatherCase(t));
        // the single-token linear: rows of whole unrolled chunk groups (4096), a remainder (520 = 65 chunks), a single
        // chunk (8), both loops (1536); row counts that do not fill the last block (1003, 5)
        int[][] gemvShapes = {{4096, 768}, {520, 1003}, {8, 5}, {1536, 256}};
        for (int[] sh : gemvShapes) {
            guard("gemv", t, "in=" + sh[0] + ",out=" + sh[1], () -> lc.gemvCase(t, sh[0], sh[1]));
            for (int n : new int[] {1, 3, 8}) {
                guard("gemv_mma", t, "n=" + n + ",in=" + sh[0], () -> lc.gemvCase(t, n, sh[0], sh[1], true));
            }
        }
        KernelCheckFp8 fp8 = new KernelCheckFp8(k, stream, rnd, this::sync, out, this::add);
        fp8.all(t, this::guard);
        new KernelCheckFused(k, stream, rnd, this::sync, out, this::add, fp8).all(t, this::guard);
        new KernelCheckKv8(k, stream, rnd, this::sync, out, this::add).all(t, this::guard);
        new KernelCheckAttentionRope(k, stream, rnd, this::sync, this::add).all(t, this::guard);
        moeCases(t);
        new KernelCheckMoeFp8(k, stream, rnd, this::sync, this::add, fp8).all(t, this::guard);
        new KernelCheckMoeFp8Gemm(k, stream, rnd, this::sync, out, this::add, fp8).all(t, this::guard);
        new KernelCheckMoeFused(k.moe().decode(), stream, rnd, this::sync, out, this::add, fp8).all(t, this::guard);
        new KernelCheckMoeRouterNorm(k, stream, rnd, this::sync, this::add).all(t, this::guard);
    }

    /** Routing once (fp32 logits, with the bf16 pass); the expert linears per element type. */
    private void moeCases(DType t) {
        KernelCheckMoe mc = new KernelCheckMoe(k, stream, rnd, this::sync, out, this::add);
        if (!routed) {
            routed = true;
            int[][] routes = {{37, 8, 2}, {37, 16, 2}, {20, 128, 8}, {9, 160, 8}, {5, 512, 32}, {3, 4, 4}};
            for (int[] r : routes) {
                for (boolean norm : new boolean[] {false, true}) {
                    String nm = "n=" + r[0] + ",E=" + r[1] + ",k=" + r[2] + ",norm=" + norm;
                    guard("moe_route", DType.fp32, nm, () -> mc.routeCase(r[0], r[1], r[2], norm, false));
                }
            }
            guard("moe_route", DType.fp32, "nan-row", () -> mc.routeCase(6, 16, 4, true, true));
        }
        // vector rows (512, 768 / 2 per rank...), a per-rank width that is no multiple of 8 (702 / 2 = 351), one token
        int[][] shapes = {{5, 8, 2, 512, 256}, {1, 16, 8, 512, 96}, {3, 8, 2, 448, 351}, {33, 4, 2, 256, 64}};
        for (int[] sh : shapes) {
            String nm = "n=" + sh[0] + ",E=" + sh[1] + ",k=" + sh[2] + ",hidden=" + sh[3] + ",inter=" + sh[4];
            guard("moe_experts", t, nm, () -> mc.expertCase(t, sh[0], sh[1], sh[2], sh[3], sh[4]));
        }
        // the sort's segments (16 warps): fewer pairs than warps, every pair on one expert (E = 2: only even ids), a
        // prefill of 2,048 tokens x top-8 over 128 experts, and 65,536 pairs over 512 experts
        int[][] grouped = {
            {40, 16, 2, 512},
            {300, 128, 8, 96},
            {7, 512, 4, 64},
            {3, 8, 2, 16},
            {100, 2, 2, 16},
            {2048, 128, 8, 8},
            {8192, 512, 8, 4}
        };
        for (int[] g : grouped) {
            String nm = "n=" + g[0] + ",E=" + g[1] + ",k=" + g[2] + ",out=" + g[3];
            guard("moe_grouped", t, nm, () -> mc.groupedCase(t, g[0], g[1], g[2], g[3]));
        }
    }

    interface Case {
        void run() throws Exception;
    }

    /** Runs a case; an exception (a CUDA error, an illegal address) is a FAIL line of its own. */
    private void guard(String kernel, DType t, String name, Case c) {
        if (only != null && !only.matcher(kernel).matches()) {
            return;
        }
        try {
            c.run();
        } catch (Exception e) {
            out.println("  " + kernel + " " + t + " " + name + ": " + e);
            add(new Result(kernel, t.name(), name, Double.NaN, Double.NaN, false));
        }
    }

    private void add(Result r) {
        results.add(r);
        out.println(r.line());
        out.flush();
    }

    private void sync() {
        Cuda.check(cuStreamSynchronize(stream), "cuStreamSynchronize (kernel execution)");
    }
}
