package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.compareLinear;
import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.CublasLt;
import io.tensorlane.runtime.llm.CublasLt.Fp8Scaling;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.model.Fp8;
import io.tensorlane.runtime.model.ScaleGrid;
import io.tensorlane.runtime.model.WeightType;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the FP8 tensor-core path: the activation quantization (tl_quant_fp8: codes and scales
 * exactly as {@link Fp8#encode} of x / (amax / 448) on the host) and the cuBLASLt FP8 GEMM with block (128x128 weight,
 * 1x128 activation) and per-channel weight scales (1x128), against the quantized operands dequantized in double, with
 * the token rows padded as the engine pads them (the padding's outputs must be zero). With a workspace (a rank on its
 * own GPU) and without (virtual ranks); a shape cuBLASLt has no algorithm for is a FAIL on a GPU where the engine
 * means to use it (sm_90).
 */
final class KernelCheckFp8Gemm {
    private static final long WORKSPACE = 32L << 20;

    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;
    private final KernelCheckFp8 weights;

    KernelCheckFp8Gemm(
            ModelKernels k,
            CUstream stream,
            SplittableRandom rnd,
            Runnable sync,
            PrintWriter out,
            Consumer<Result> results,
            KernelCheckFp8 weights) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.out = out;
        this.results = results;
        this.weights = weights;
    }

    void all(DType t, KernelCheckFp8.Guard guard) {
        // groups of 128 (the GEMM's), a partial last group (200, 448), one group per token, 1..17 tokens
        // {in, n, group, rows}: rows past n are the GEMM's padding (zero codes, scale 1)
        int[][] quant = {{4096, 5, 128, 8}, {200, 3, 128, 4}, {448, 17, 128, 17}, {4096, 4, 4096, 4}, {200, 9, 200, 12}
        };
        for (int[] q : quant) {
            String nm = "in=" + q[0] + ",n=" + q[1] + ",rows=" + q[3] + ",group=" + q[2];
            guard.run("quant_fp8", t, nm, () -> quantCase(t, q[1], q[3], q[0], q[2], nm));
        }
        // {in, out, n}: whole blocks; 3.5 column blocks (448) and rows that end inside a row block (1200); a scale
        // grid whose rows need padding to 4 (1792 = 14 blocks: down_proj of 8B at TP 8); 1..300 tokens, run as the
        // engine runs them (rows rounded up to CublasLt.TOKEN_MULTIPLE)
        int[][] gemm = {
            {4096, 768, 16},
            {448, 1200, 32},
            {1536, 256, 128},
            {1792, 512, 300},
            {4096, 1024, 1},
            {4096, 1024, 2},
            {4096, 1024, 3},
            {4096, 1024, 4},
            {4096, 1024, 5},
            {4096, 1024, 8}
        };
        for (long ws : new long[] {WORKSPACE, 0}) {
            for (Fp8Scaling sc : Fp8Scaling.values()) {
                for (int[] g : gemm) {
                    String nm = sc.name().toLowerCase(java.util.Locale.ROOT) + ",in=" + g[0] + ",out=" + g[1] + ",n="
                            + g[2] + (ws == 0 ? ",no-workspace" : "");
                    guard.run("gemm_fp8", t, nm, () -> gemmCase(t, sc, g[2], g[0], g[1], ws, nm));
                }
            }
        }
    }

    private double[] randomX(int count) {
        double[] xv = new double[count];
        for (int i = 0; i < count; i++) {
            // magnitudes over several binades, some exact zeros: a wrong amax or group shows
            xv[i] = rnd.nextInt(16) == 0 ? 0 : (rnd.nextDouble() * 2 - 1) * Math.scalb(1.0, rnd.nextInt(6) - 3);
        }
        return xv;
    }

    private static float[] toFloats(byte[] raw) {
        float[] f = new float[raw.length / 4];
        ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
        return f;
    }

    /** The host's scales of x [n, in] in T, [g * rows + t]; padding rows (t >= n) get 1. */
    private static float[] hostScales(double[] xd, int n, int rows, int in, int group) {
        int groups = ScaleGrid.groups(in, group);
        float[] s = new float[groups * rows];
        Arrays.fill(s, 1f);
        for (int t = 0; t < n; t++) {
            for (int g = 0; g < groups; g++) {
                float amax = 0;
                for (int c = g * group; c < Math.min((g + 1) * group, in); c++) {
                    amax = Math.max(amax, Math.abs((float) xd[t * in + c]));
                }
                s[g * rows + t] = amax > 0 ? amax / Fp8.MAX : 1f;
            }
        }
        return s;
    }

    void quantCase(DType t, int n, int rows, int in, int group, String name) {
        byte[] x = encode(t, randomX(n * in));
        double[] xd = HostTensors.decode(x, t);
        int groups = ScaleGrid.groups(in, group);
        float[] refS = hostScales(xd, n, rows, in, group);
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dQ = a.poisoned((long) rows * in + 64);
            long dS = a.poisoned(4L * groups * rows + 64);
            k.fp8().quantize(t, dX, dQ, dS, n, rows, in, group, stream);
            sync.run();
            byte[] rawQ = a.download(dQ, rows * in + 64);
            byte[] rawS = a.download(dS, 4 * groups * rows + 64);
            float[] s = toFloats(Arrays.copyOf(rawS, 4 * groups * rows));
            long bad = poisonBroken(rawQ, (long) rows * in, 64) + poisonBroken(rawS, 4L * groups * rows, 64);
            double maxAbs = 0;
            for (int i = 0; i < s.length; i++) {
                bad += Float.compare(s[i], refS[i]) != 0 ? 1 : 0;
                maxAbs = Math.max(maxAbs, Math.abs(s[i] - refS[i]));
            }
            for (int tok = 0; tok < rows; tok++) {
                for (int c = 0; c < in; c++) {
                    byte want = tok < n ? Fp8.encode((float) xd[tok * in + c] / refS[(c / group) * rows + tok]) : 0;
                    bad += rawQ[tok * in + c] != want ? 1 : 0;
                }
            }
            results.accept(Result.of("quant_fp8", t, name, new Stat(maxAbs, 0, bad)));
        }
    }

    void gemmCase(DType t, Fp8Scaling sc, int n, int in, int rows, long workspace, String name) throws Exception {
        WeightType type = sc == Fp8Scaling.BLOCK ? WeightType.FP8_BLOCK : WeightType.FP8_ROW;
        byte[] x = encode(t, randomX(n * in));
        byte[] w = weights.codes(rows * in);
        float[] s = weights.scales(type, rows, in);
        int group = Fp8Scaling.GROUP;
        int groups = ScaleGrid.groups(in, group);
        int m = CublasLt.tokenRows(n, n + CublasLt.TOKEN_MULTIPLE); // the GEMM's token rows (padded)
        float[] gemmS = type == WeightType.FP8_BLOCK
                ? ScaleGrid.padRows(s, (int) type.scaleCols(in), CublasLt.BLOCK_SCALE_ROW_MULTIPLE)
                : ScaleGrid.rowsPerGroup(s, groups);
        int outBytes = n * rows * t.bytes();
        int guardBytes = rows * t.bytes();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dW = a.upload(w);
            long dS = a.upload(floats(gemmS));
            long dQ = a.alloc((long) m * in);
            long dXs = a.alloc(4L * groups * m);
            int padBytes = (m - n) * rows * t.bytes(); // the padded rows' outputs (zeros), then the guard
            long dY = a.poisoned((long) outBytes + padBytes + guardBytes);
            long dWs = workspace > 0 ? a.alloc(workspace) : 0;
            try (CublasLt lt = CublasLt.create(stream, dWs, workspace, 0)) {
                CublasLt.Plan plan = lt.gemm(sc, t, m, in, rows, rows, dS, dXs);
                if (plan == null) {
                    out.println("  gemm_fp8 " + t + " " + name + ": cuBLASLt has no algorithm for " + m + " rows");
                    results.accept(new Result("gemm_fp8", t.name(), name, Double.NaN, Double.NaN, false));
                    return;
                }
                k.fp8().quantize(t, dX, dQ, dXs, n, m, in, group, stream);
                lt.run(plan, dW, dS, dQ, dXs, dY);
                sync.run();
            }
            // the reference: the operands as the GEMM got them (codes times scales), in double
            byte[] q = a.download(dQ, n * in);
            float[] xs = toFloats(a.download(dXs, 4 * groups * m));
            double[] xq = new double[n * in];
            for (int tok = 0; tok < n; tok++) {
                for (int c = 0; c < in; c++) {
                    xq[tok * in + c] = (double) Fp8.decode(q[tok * in + c]) * xs[(c / group) * m + tok];
                }
            }
            double[] wd = Fp8.dequantize(w, s, type, rows, in);
            byte[] raw = a.download(dY, outBytes + padBytes + guardBytes);
            double[] got = HostTensors.decode(Arrays.copyOf(raw, outBytes), t);
            long nonZeroPad = 0;
            for (double v : HostTensors.decode(Arrays.copyOfRange(raw, outBytes, outBytes + padBytes), t)) {
                nonZeroPad += v != 0 ? 1 : 0;
            }
            // Hopper's FP8 MMA keeps ~14 bits while it accumulates a 128-deep chunk (fp32 between chunks): allow 2^-10
            // of the products' absolute sum; a wrong scale, block or byte is off by far more
            Stat st = compareLinear(got, xq, wd, n, in, rows, HostTensors.unitRoundoff(t), 0x1p-10);
            long touched = poisonBroken(raw, outBytes + padBytes, guardBytes);
            if (touched > 0 || nonZeroPad > 0) {
                out.println("  gemm_fp8 " + t + " " + name + ": " + touched + " bytes written past the output, "
                        + nonZeroPad + " padding outputs not zero");
            }
            results.accept(Result.of(
                    "gemm_fp8", t, name, new Stat(st.maxAbs(), st.maxRel(), st.bad() + touched + nonZeroPad)));
        }
    }
}
