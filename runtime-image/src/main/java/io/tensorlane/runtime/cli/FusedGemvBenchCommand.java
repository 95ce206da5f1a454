package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;

import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.engine.Cuda;
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
import jcuda.driver.CUevent;
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
 * a decode step does. Prints per kernel the time and the weight bytes read per second, and per layer the sum of the
 * four and its ratio to the base variant's. Correctness of the variants is kernelcheck's (gemv_norm, gemv_norm_silu,
 * gemv_res, each variant against the unfused kernels, bit for bit).
 */
@Command(
        name = "bench-fused",
        mixinStandardHelpOptions = true,
        description = "Times the fused one-token linears of one decoder layer per weight type and inner-loop variant.")
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

    @Override
    public Integer call() {
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
        CUstream stream = new CUstream();
        try (ModelKernels k = new ModelKernels()) {
            Cuda.check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
            Cuda.check(cuStreamCreate(stream, 0), "cuStreamCreate");
            out.printf(
                    "bench-fused: bf16 activations; median of %d launches after %d; weights cycled over >= %d MiB%n",
                    iters, warmup, cycleMib);
            out.println("type        linear   variant          us      GB/s   x base");
            for (WeightType type : List.of(WeightType.DENSE, WeightType.FP8_ROW, WeightType.FP8_BLOCK)) {
                double[] base = new double[4];
                for (FusedGemvVariant v : FusedGemvVariant.values()) {
                    if (v == FusedGemvVariant.PIPE_XF32_BITS && !type.fp8()) {
                        continue;
                    }
                    double layerUs = 0;
                    List<Linear> lin = layer(hidden, qkv, inter);
                    for (int i = 0; i < lin.size(); i++) {
                        Linear l = lin.get(i);
                        long bytes = weightBytes(type, l);
                        double us = time(k, stream, type, l, v);
                        if (v == FusedGemvVariant.BASE) {
                            base[i] = us;
                        }
                        layerUs += us;
                        out.printf(
                                Locale.ROOT,
                                "%-11s %-8s %-14s %8.2f %9.0f %8.3f%n",
                                type.name().toLowerCase(Locale.ROOT),
                                l.name(),
                                v.key(),
                                us,
                                bytes / us / 1e3,
                                base[i] / us);
                    }
                    double baseLayer = Arrays.stream(base).sum();
                    out.printf(
                            Locale.ROOT,
                            "%-11s %-8s %-14s %8.2f %9s %8.3f%n",
                            type.name().toLowerCase(Locale.ROOT),
                            "layer",
                            v.key(),
                            layerUs,
                            "",
                            baseLayer / layerUs);
                    out.flush();
                }
            }
        } finally {
            cuStreamDestroy(stream);
            cuDevicePrimaryCtxRelease(dev);
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** Bytes of the weight and its scales. */
    static long weightBytes(WeightType type, Linear l) {
        long rows = l.weightRows();
        return type.fp8() ? rows * l.in() + 4L * type.scaleCount(rows, l.in()) : rows * l.in() * 2L;
    }

    private double time(ModelKernels k, CUstream s, WeightType type, Linear l, FusedGemvVariant v) {
        SplittableRandom rnd = new SplittableRandom(42);
        long rows = l.weightRows();
        long wBytes = type.fp8() ? rows * l.in() : rows * l.in() * 2L;
        int n = copies(wBytes, (long) cycleMib << 20);
        DType t = DType.bf16;
        try (KernelCheckArena a = new KernelCheckArena()) {
            byte[] w = new byte[Math.toIntExact(wBytes)];
            for (int i = 0; i < w.length; i++) {
                // e4m3 codes without NaN; for bf16 the high byte of each pair stays small (|w| < 2)
                int b = rnd.nextInt(256);
                w[i] = (byte) (type.fp8() ? ((b & 0x7f) == 0x7f ? b ^ 1 : b) : ((i & 1) == 1 ? (b & 0xbf) : b));
            }
            long[] ws = new long[n];
            ws[0] = a.upload(w);
            for (int i = 1; i < n; i++) {
                ws[i] = a.alloc(wBytes);
                Cuda.check(cuMemcpyDtoD(ptr(ws[i]), ptr(ws[0]), wBytes), "cuMemcpyDtoD");
            }
            long scales = type.fp8() ? a.upload(KernelCheckMath.floats(scaleValues(type, rows, l.in(), rnd))) : 0;
            long resid = a.upload(KernelCheckMath.floats(values(Math.max(l.in(), l.rows()), rnd)));
            long gamma = a.upload(KernelCheckMath.encode(t, doubles(l.in(), rnd)));
            long x = a.upload(KernelCheckMath.encode(t, doubles(l.in(), rnd)));
            long y = a.alloc(rows * 2L);
            Runnable[] launch = new Runnable[n];
            for (int i = 0; i < n; i++) {
                long wi = ws[i];
                launch[i] = switch (l.kind()) {
                    case "res" -> () -> k.fused().residual(t, type, x, wi, scales, resid, l.in(), l.rows(), v, s);
                    default ->
                        () -> k.fused()
                                .norm(
                                        t,
                                        type,
                                        resid,
                                        gamma,
                                        1e-5f,
                                        wi,
                                        scales,
                                        y,
                                        l.in(),
                                        l.rows(),
                                        l.kind().equals("silu"),
                                        v,
                                        s);
                };
            }
            for (int i = 0; i < warmup; i++) {
                launch[i % n].run();
            }
            double[] us = new double[iters];
            CUevent e0 = new CUevent();
            CUevent e1 = new CUevent();
            Cuda.check(cuEventCreate(e0, 0), "cuEventCreate");
            Cuda.check(cuEventCreate(e1, 0), "cuEventCreate");
            try {
                float[] ms = {0};
                for (int i = 0; i < iters; i++) {
                    Cuda.check(cuEventRecord(e0, s), "cuEventRecord");
                    launch[(warmup + i) % n].run();
                    Cuda.check(cuEventRecord(e1, s), "cuEventRecord");
                    Cuda.check(cuEventSynchronize(e1), "cuEventSynchronize");
                    Cuda.check(cuEventElapsedTime(ms, e0, e1), "cuEventElapsedTime");
                    us[i] = ms[0] * 1e3;
                }
            } finally {
                cuEventDestroy(e0);
                cuEventDestroy(e1);
            }
            Arrays.sort(us);
            return us[iters / 2];
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
