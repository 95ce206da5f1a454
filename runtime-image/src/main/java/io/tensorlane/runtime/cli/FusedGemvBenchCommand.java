package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.llm.FusedGemvKernels;
import io.tensorlane.runtime.llm.FusedGemvVariant;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.model.WeightType;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code bench-fused}: the GPU time of each fused one-token linear (tl_gemv_fused.cuh) of a decoder layer, per weight
 * type and inner-loop variant ({@link FusedGemvVariant}), all in one run, on random inputs of a geometry's shapes
 * (default the Llama-3.1-8B layer's: qkv 4096 → 6144, o 4096 → 4096, gate_up 4096 → 2 × 14336, down 14336 → 4096).
 * Each kernel is timed alone by CUDA events around each launch (median of {@code --iters} after {@code --warmup}),
 * cycling over copies of its weight that together exceed {@code --cycle-mib} so that every launch reads from DRAM, as
 * a decode step does; eager (the host's launch cost in each time) and per launch of a captured graph of one launch per
 * copy (at least 8; what a decode step's graph pays, less its programmatic edges: {@link EventTimer#graphMedian}).
 * Prints per kernel the time and the weight bytes read per second, both ways, and per layer the sum of the
 * four and its ratio to the base variant's; then one decode token's attention at {@code --context} keys with its key
 * slices merged by the combine kernel and by their last block ({@link FusedBenchAttention}). Correctness of the variants is kernelcheck's (gemv_norm, gemv_norm_silu,
 * gemv_res, each variant against the unfused kernels, bit for bit).
 */
@Command(
        name = "bench-fused",
        mixinStandardHelpOptions = true,
        description =
                "Times the fused one-token linears of one decoder layer per weight type and inner-loop variant, and "
                        + "a decode token's attention with both merges of its key slices.")
public final class FusedGemvBenchCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--hidden", description = "Hidden size (default: ${DEFAULT-VALUE}).", defaultValue = "4096")
    int hidden;

    @Option(names = "--qkv", description = "qkv output rows (default: ${DEFAULT-VALUE}).", defaultValue = "6144")
    int qkv;

    @Option(
            names = "--inter",
            description = "MLP intermediate size (default: ${DEFAULT-VALUE}).",
            defaultValue = "14336")
    int inter;

    @Option(
            names = "--warmup",
            description = "Untimed launches per kernel (default: ${DEFAULT-VALUE}).",
            defaultValue = "20")
    int warmup;

    @Option(
            names = "--iters",
            description = "Timed launches per kernel (default: ${DEFAULT-VALUE}).",
            defaultValue = "200")
    int iters;

    @Option(
            names = "--cycle-mib",
            description =
                    "The weight copies a kernel cycles over hold at least this many MiB (default: ${DEFAULT-VALUE}).",
            defaultValue = "512")
    int cycleMib;

    @Option(names = "--device", description = "GPU index (default: ${DEFAULT-VALUE}).", defaultValue = "0")
    int device;

    @Option(
            names = "--heads",
            description = "Attention: query and kv heads and the head dim (default: ${DEFAULT-VALUE}).",
            split = ",",
            defaultValue = "32,8,128")
    int[] heads;

    @Option(
            names = "--context",
            description =
                    "Attention: the one query token's position + 1, the keys it reads (default: ${DEFAULT-VALUE}).",
            defaultValue = "512")
    int context;

    /** One linear of the layer: which fused kernel, its input width and output rows (gate_up: the intermediate size). */
    record Linear(String name, String kind, int in, int rows) {
        /** Rows of its weight (gate_up's weight holds gate and up). */
        int weightRows() {
            return kind.equals("silu") ? 2 * rows : rows;
        }
    }

    /** The four linears of a layer of this geometry. */
    static List<Linear> layer(int hidden, int qkv, int inter) {
        return List.of(
                new Linear("qkv", "norm", hidden, qkv),
                new Linear("o", "res", hidden, hidden),
                new Linear("gate_up", "silu", hidden, inter),
                new Linear("down", "res", inter, hidden));
    }

    /** How many copies of {@code bytes} fill {@code cycleBytes} (at least two). */
    static int copies(long bytes, long cycleBytes) {
        return (int) Math.max(2, (cycleBytes + bytes - 1) / bytes);
    }

    /** Refuses what cannot be timed, before any GPU work. */
    void validate() {
        if (hidden <= 0 || qkv <= 0 || inter <= 0) {
            throw new IllegalArgumentException("bench-fused: --hidden, --qkv and --inter must be positive");
        }
        if (hidden % 16 != 0 || inter % 16 != 0) {
            throw new IllegalArgumentException("bench-fused: --hidden and --inter must be multiples of 16 (the kernels "
                    + "read rows in 16-byte chunks), got " + hidden + " and " + inter);
        }
        if (hidden > FusedGemvKernels.MAX_IN) {
            throw new IllegalArgumentException("bench-fused: --hidden " + hidden + " is wider than the norm kernels' "
                    + "staged x (" + FusedGemvKernels.MAX_IN + ")");
        }
        if (heads.length != 3 || heads[0] <= 0 || heads[1] <= 0 || heads[2] <= 0 || heads[0] % heads[1] != 0) {
            throw new IllegalArgumentException(
                    "bench-fused: --heads takes hq,hk,hd with hk dividing hq, got " + Arrays.toString(heads));
        }
        if (context < 1) {
            throw new IllegalArgumentException("bench-fused: --context must be >= 1, got " + context);
        }
        if (iters < 1 || warmup < 0 || cycleMib < 1) {
            throw new IllegalArgumentException(
                    "bench-fused: --iters must be >= 1, --warmup >= 0 and --cycle-mib >= 1, got " + iters + ", "
                            + warmup + ", " + cycleMib);
        }
    }

    @Override
    public Integer call() {
        validate();
        PrintWriter out = spec.commandLine().getOut();
        if (!Kernels.modelFatbinPresent()) {
            out.println("bench-fused: " + Kernels.MODEL_FATBIN_RESOURCE + " is missing");
            out.flush();
            return ExitCodes.RUNTIME;
        }
        Cuda.init();
        CUdevice dev = new CUdevice();
        Cuda.check(cuDeviceGet(dev, device), "cuDeviceGet");
        CUcontext ctx = new CUcontext();
        Cuda.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
        try {
            Cuda.check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent"); // ModelKernels loads its module into this context
            CUstream stream = new CUstream();
            Cuda.check(cuStreamCreate(stream, 0), "cuStreamCreate");
            try (ModelKernels k = new ModelKernels()) {
                run(k, stream, out);
            } finally {
                cuStreamDestroy(stream);
            }
        } finally {
            cuDevicePrimaryCtxRelease(dev);
        }
        out.flush();
        return ExitCodes.OK;
    }

    private void run(ModelKernels k, CUstream stream, PrintWriter out) {
        out.printf(
                "bench-fused: bf16 activations; median of %d launches after %d; weights cycled over >= %d MiB%n",
                iters, warmup, cycleMib);
        out.println("type        linear   variant          us      GB/s   x base | graph us      GB/s   x base");
        List<Linear> lin = layer(hidden, qkv, inter);
        for (WeightType type : List.of(WeightType.DENSE, WeightType.FP8_ROW, WeightType.FP8_BLOCK)) {
            List<FusedGemvVariant> vs = Arrays.stream(FusedGemvVariant.values())
                    .filter(v -> type.fp8() || v != FusedGemvVariant.PIPE_XF32_BITS)
                    .toList();
            double[][] us = new double[vs.size()][lin.size()];
            double[][] gus = new double[vs.size()][lin.size()];
            for (int i = 0; i < lin.size(); i++) {
                try (Inputs in = new Inputs(type, lin.get(i))) { // the same buffers for every variant
                    for (int j = 0; j < vs.size(); j++) {
                        us[j][i] = in.time(k, stream, vs.get(j), false);
                        gus[j][i] = in.time(k, stream, vs.get(j), true);
                    }
                }
            }
            String ty = type.name().toLowerCase(Locale.ROOT);
            double baseLayer = Arrays.stream(us[0]).sum(); // vs.get(0) is BASE
            double baseGraph = Arrays.stream(gus[0]).sum();
            for (int j = 0; j < vs.size(); j++) {
                for (int i = 0; i < lin.size(); i++) {
                    out.printf(
                            Locale.ROOT,
                            "%-11s %-8s %-14s %8.2f %9.0f %8.3f | %8.2f %9.0f %8.3f%n",
                            ty,
                            lin.get(i).name(),
                            vs.get(j).key(),
                            us[j][i],
                            weightBytes(type, lin.get(i)) / us[j][i] / 1e3,
                            us[0][i] / us[j][i],
                            gus[j][i],
                            weightBytes(type, lin.get(i)) / gus[j][i] / 1e3,
                            gus[0][i] / gus[j][i]);
                }
                double layerUs = Arrays.stream(us[j]).sum();
                double layerGraph = Arrays.stream(gus[j]).sum();
                out.printf(
                        Locale.ROOT,
                        "%-11s %-8s %-14s %8.2f %9s %8.3f | %8.2f %9s %8.3f%n",
                        ty,
                        "layer",
                        vs.get(j).key(),
                        layerUs,
                        "",
                        baseLayer / layerUs,
                        layerGraph,
                        "",
                        baseGraph / layerGraph);
            }
            out.flush();
        }
        new FusedBenchAttention(heads[0], heads[1], heads[2], context, warmup, iters).run(k, stream, out);
    }

    private double median(CUstream s, Runnable launch, int graphReps) {
        return graphReps > 0
                ? EventTimer.graphMedian(s, warmup, iters, graphReps, launch)
                : EventTimer.median(s, warmup, iters, launch);
    }

    /** Bytes of the weight and its scales. */
    static long weightBytes(WeightType type, Linear l) {
        long rows = l.weightRows();
        return type.fp8() ? rows * l.in() + 4L * type.scaleCount(rows, l.in()) : rows * l.in() * 2L;
    }

    /** One linear's device inputs: copies of a random weight, its scales, the residual, gamma, x and y. */
    private final class Inputs implements AutoCloseable {
        private final KernelCheckArena a = new KernelCheckArena();
        private final WeightType type;
        private final Linear l;
        private final long[] ws;
        private final long scales;
        private final long resid;
        private final long gamma;
        private final long x;
        private final long y;

        Inputs(WeightType type, Linear l) {
            this.type = type;
            this.l = l;
            SplittableRandom rnd = new SplittableRandom(42);
            long rows = l.weightRows();
            long wBytes = type.fp8() ? rows * l.in() : rows * l.in() * 2L;
            byte[] w = new byte[Math.toIntExact(wBytes)];
            for (int i = 0; i < w.length; i++) {
                // e4m3 codes without NaN; bf16 pairs whose high byte keeps |w| < 2
                int b = rnd.nextInt(256);
                w[i] = (byte) (type.fp8() ? ((b & 0x7f) == 0x7f ? b ^ 1 : b) : ((i & 1) == 1 ? (b & 0xbf) : b));
            }
            ws = new long[copies(wBytes, (long) cycleMib << 20)];
            ws[0] = a.upload(w);
            for (int i = 1; i < ws.length; i++) {
                ws[i] = a.alloc(wBytes);
                Cuda.check(cuMemcpyDtoD(ptr(ws[i]), ptr(ws[0]), wBytes), "cuMemcpyDtoD");
            }
            scales = type.fp8() ? a.upload(KernelCheckMath.floats(scaleValues(type, rows, l.in(), rnd))) : 0;
            resid = a.upload(KernelCheckMath.floats(values(Math.max(l.in(), l.rows()), rnd)));
            gamma = a.upload(KernelCheckMath.encode(DType.bf16, doubles(l.in(), rnd)));
            x = a.upload(KernelCheckMath.encode(DType.bf16, doubles(l.in(), rnd)));
            y = a.alloc(rows * 2L);
        }

        private void launch(FusedGemvKernels f, CUstream s, long w) {
            DType t = DType.bf16;
            if (l.kind().equals("res")) {
                f.residual(t, type, x, w, scales, resid, l.in(), l.rows(), s);
            } else {
                f.norm(
                        t,
                        type,
                        resid,
                        gamma,
                        1e-5f,
                        w,
                        scales,
                        y,
                        l.in(),
                        l.rows(),
                        l.kind().equals("silu"),
                        s);
            }
        }

        /**
         * The median GPU time of one launch of variant {@code v}, in microseconds, cycling over the copies: eager, or
         * in a graph of one launch per copy ({@code graph}; at least 8).
         */
        double time(ModelKernels k, CUstream s, FusedGemvVariant v, boolean graph) {
            FusedGemvKernels f = k.fused().with(v); // once: nothing but the launch between a launch's events
            int[] next = {0};
            return median(s, () -> launch(f, s, ws[next[0]++ % ws.length]), graph ? Math.max(8, ws.length) : 0);
        }

        @Override
        public void close() {
            a.close();
        }
    }

    private static CUdeviceptr ptr(long address) {
        return (CUdeviceptr) new CUdeviceptr().withByteOffset(address);
    }

    private static float[] scaleValues(WeightType type, long rows, int in, SplittableRandom rnd) {
        float[] s = new float[Math.toIntExact(type.scaleCount(rows, in))];
        for (int i = 0; i < s.length; i++) {
            s[i] = (float) Math.scalb(1 + rnd.nextDouble(), -9);
        }
        return s;
    }

    private static float[] values(int n, SplittableRandom rnd) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (rnd.nextDouble() * 2 - 1);
        }
        return v;
    }

    private static double[] doubles(int n, SplittableRandom rnd) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = rnd.nextDouble() * 2 - 1;
        }
        return v;
    }
}
