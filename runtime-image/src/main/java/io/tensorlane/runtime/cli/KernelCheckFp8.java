package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.compare;
import static io.tensorlane.runtime.cli.KernelCheckMath.compareLinear;
import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.maxAbs;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.model.Fp8;
import io.tensorlane.runtime.model.WeightType;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the FP8-weight kernels (tl_fp8.cuh): the GEMV of 1..8 tokens and the dequantization,
 * for block scales (a grid row per 128 rows or per row) and per-row scales. Weights are random e4m3 codes (every finite one can occur, subnormals and +-448
 * included), scales random per block or row, so a kernel that read the wrong scale, block or byte fails; the
 * reference is {@link Fp8#dequantize} in double.
 */
final class KernelCheckFp8 {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;

    KernelCheckFp8(
            ModelKernels k,
            CUstream stream,
            SplittableRandom rnd,
            Runnable sync,
            PrintWriter out,
            Consumer<Result> results) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.out = out;
        this.results = results;
    }

    /** The cases kernelcheck runs for one element type. */
    void all(DType t, Guard guard) {
        // rows of whole unrolled chunk groups (4096; 8192: two for one token), 3.5 column blocks (448), one chunk (16),
        // rows that end inside a row block (300, 1200, 5), one to eight tokens (one: the tl_gemv1 entries)
        int[][] gemv = {
            {4096, 768, 1},
            {4096, 300, 3},
            {448, 1200, 8},
            {16, 5, 2},
            {1536, 256, 5},
            {4096, 1024, 8},
            {448, 1200, 1},
            {8192, 300, 1},
            {16, 5, 1}
        };
        for (WeightType type : WeightType.values()) {
            if (!type.fp8()) {
                continue;
            }
            for (int[] g : gemv) {
                String nm =
                        type.name().toLowerCase(java.util.Locale.ROOT) + ",n=" + g[2] + ",in=" + g[0] + ",out=" + g[1];
                guard.run("gemv_fp8", t, nm, () -> gemvCase(t, type, g[2], g[0], g[1], nm, false, 1));
                guard.run("gemv_mma_fp8", t, nm, () -> gemvCase(t, type, g[2], g[0], g[1], nm, true, 1));
            }
            // the tensor-core kernel's staging of x as f16 times 2^p: bf16 x far outside f16's range (|x| up to
            // 2^20), fp16 x small (2^-6: staged times 2^21; the outputs stay normal fp16); in = 1040: a 16-column tail
            for (int[] g : new int[][] {{1040, 37, 1}, {4096, 64, 3}, {4096, 300, 8}}) {
                double mag = t == DType.bf16 ? 0x1p20 : 0x1p-6;
                String nm = type.name().toLowerCase(java.util.Locale.ROOT) + ",n=" + g[2] + ",in=" + g[0] + ",out="
                        + g[1] + ",|x|~" + (t == DType.bf16 ? "2^20" : "2^-6");
                guard.run("gemv_mma_fp8", t, nm, () -> gemvCase(t, type, g[2], g[0], g[1], nm, true, mag));
            }
            // the 16-element path (448 columns), the one-element path (200, 36 columns: not multiples of 16)
            for (int[] d : new int[][] {{300, 448}, {130, 200}, {5, 36}}) {
                String nm = type.name().toLowerCase(java.util.Locale.ROOT) + ",rows=" + d[0] + ",cols=" + d[1];
                guard.run("dequant_fp8", t, nm, () -> dequantCase(t, type, d[0], d[1], nm));
            }
        }
        new KernelCheckFp8Gemm(k, stream, rnd, sync, out, results, this).all(t, guard);
    }

    /** A case body run by the command's guard (an exception is a FAIL line). */
    interface Guard {
        void run(String kernel, DType t, String name, KernelCheckCommand.Case c);
    }

    byte[] codes(int count) {
        byte[] b = new byte[count];
        for (int i = 0; i < count; i++) {
            int v = rnd.nextInt(256);
            b[i] = (byte) ((v & 0x7f) == 0x7f ? v ^ 1 : v); // no NaN codes
        }
        return b;
    }

    float[] scales(WeightType type, int rows, int cols) {
        float[] s = new float[(int) type.scaleCount(rows, cols)];
        for (int i = 0; i < s.length; i++) {
            s[i] = (float) Math.scalb(1 + rnd.nextDouble(), -9 - rnd.nextInt(4)); // like amax/448 of weights ~0.1..1
        }
        return s;
    }

    /**
     * The FP8 linear of n tokens ({@code mma}: the tensor-core kernel) against fp64 on the same codes and scales: x
     * uniform in [-mag, mag], every eighth column of token 0 also times 2^-12 (values far below the amax of their
     * staged group).
     */
    void gemvCase(DType t, WeightType type, int n, int in, int rows, String name, boolean mma, double mag) {
        double[] xv = new double[n * in];
        for (int i = 0; i < xv.length; i++) {
            xv[i] = (rnd.nextDouble() * 2 - 1) * mag * (i < in && i % 8 == 0 ? 0x1p-12 : 1);
        }
        byte[] x = encode(t, xv);
        byte[] w = codes(rows * in);
        float[] s = scales(type, rows, in);
        int outBytes = n * rows * t.bytes();
        int guardBytes = rows * t.bytes();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dW = a.upload(w);
            long dS = a.upload(floats(s));
            long dY = a.poisoned((long) outBytes + guardBytes);
            k.fp8().gemv(t, type, dX, dW, dS, dY, n, in, rows, mma, stream);
            sync.run();
            double[] xd = HostTensors.decode(x, t);
            double[] wd = Fp8.dequantize(w, s, type, rows, in);
            byte[] raw = a.download(dY, outBytes + guardBytes);
            double[] got = HostTensors.decode(Arrays.copyOf(raw, outBytes), t);
            Stat st = compareLinear(got, xd, wd, n, in, rows, HostTensors.unitRoundoff(t), in * 0x1p-24);
            long touched = poisonBroken(raw, outBytes, guardBytes);
            String kernel = mma ? "gemv_mma_fp8" : "gemv_fp8";
            if (touched > 0) {
                out.println("  " + kernel + " " + t + " " + name + ": " + touched + " bytes written past the output");
            }
            results.accept(Result.of(kernel, t, name, new Stat(st.maxAbs(), st.maxRel(), st.bad() + touched)));
        }
    }

    void dequantCase(DType t, WeightType type, int rows, int cols, String name) {
        byte[] w = codes(rows * cols);
        float[] s = scales(type, rows, cols);
        int outBytes = rows * cols * t.bytes();
        int guardBytes = 64 * t.bytes();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dW = a.upload(w);
            long dS = a.upload(floats(s));
            long dOut = a.poisoned((long) outBytes + guardBytes);
            k.fp8().dequant(t, type, dW, dS, dOut, rows, cols, stream);
            sync.run();
            double[] ref = Fp8.dequantize(w, s, type, rows, cols);
            byte[] raw = a.download(dOut, outBytes + guardBytes);
            double[] got = HostTensors.decode(Arrays.copyOf(raw, outBytes), t);
            // one fp32 product (exact inputs), then one rounding to T
            Stat st = compare(got, ref, HostTensors.unitRoundoff(t), 0x1p-24, maxAbs(ref));
            long touched = poisonBroken(raw, outBytes, guardBytes);
            if (touched > 0) {
                out.println("  dequant_fp8 " + t + " " + name + ": " + touched + " bytes written past the output");
            }
            results.accept(Result.of("dequant_fp8", t, name, new Stat(st.maxAbs(), st.maxRel(), st.bad() + touched)));
        }
    }
}
