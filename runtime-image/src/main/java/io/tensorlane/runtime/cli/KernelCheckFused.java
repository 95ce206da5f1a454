package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.FusedGemvVariant;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.model.WeightType;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the one-token linears with the residual stream folded in (tl_gemv_fused.cuh), dense
 * and FP8 (every scale layout): each against the unfused kernels it replaces on the same inputs, bit for bit —
 * {@code gemv_norm}: tl_add_rmsnorm (mode 2) then the GEMV; {@code gemv_norm_silu}: the same then tl_silu_mul;
 * {@code gemv_res}: the GEMV then tl_add_rmsnorm's residual add (mode 1). Those kernels have cases of their own
 * against fp64; these show the fused ones compute exactly what they do, write nothing past their outputs and (norm)
 * leave the residual unchanged. Any differing element fails the case. Every inner-loop variant ({@link
 * FusedGemvVariant}) runs every case under the same rule, the integer e4m3 decode too: it may differ only where a
 * partial sum falls below fp32's normal range, and a differing element still fails its case.
 */
final class KernelCheckFused {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;
    private final KernelCheckFp8 fp8;

    KernelCheckFused(
            ModelKernels k,
            CUstream stream,
            SplittableRandom rnd,
            Runnable sync,
            PrintWriter out,
            Consumer<Result> results,
            KernelCheckFp8 fp8) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.out = out;
        this.results = results;
        this.fp8 = fp8;
    }

    /** The cases for one element type. */
    void all(DType t, KernelCheckFp8.Guard guard) {
        // (in, rows): the 8B geometry's qkv (4096 -> 6144) and o; a 16-column tail and a last block not filled (1040,
        // 37); the widest staged x (8192); one chunk (16 -> 5); down's input wider than the staged limit (14336: res)
        int[][] norm = {{4096, 6144}, {1040, 37}, {8192, 300}, {16, 5}};
        int[][] silu = {{4096, 1024}, {1040, 37}, {8192, 100}};
        int[][] res = {{4096, 4096}, {14336, 512}, {1040, 37}, {16, 5}};
        for (FusedGemvVariant v : FusedGemvVariant.values()) {
            String vs = v == FusedGemvVariant.BASE ? "" : ",v=" + v.key();
            for (WeightType type : WeightType.values()) {
                if (v == FusedGemvVariant.PIPE_XF32_BITS && !type.fp8()) {
                    continue; // dense weights take PIPE_XF32's kernels
                }
                String ty = type.name().toLowerCase(Locale.ROOT);
                for (int[] c : norm) {
                    String nm = ty + ",in=" + c[0] + ",out=" + c[1] + vs;
                    guard.run("gemv_norm", t, nm, () -> normCase(t, type, c[0], c[1], false, v, nm));
                }
                for (int[] c : silu) {
                    String nm = ty + ",in=" + c[0] + ",inter=" + c[1] + vs;
                    guard.run("gemv_norm_silu", t, nm, () -> normCase(t, type, c[0], c[1], true, v, nm));
                }
                for (int[] c : res) {
                    String nm = ty + ",in=" + c[0] + ",out=" + c[1] + vs;
                    guard.run("gemv_res", t, nm, () -> resCase(t, type, c[0], c[1], v, nm));
                }
            }
        }
    }

    /** A weight of {@code rows} x {@code in} of this type: T values or e4m3 codes, with their scales (null: dense). */
    private record Weight(byte[] data, float[] scales) {}

    private Weight weight(DType t, WeightType type, int rows, int in) {
        if (!type.fp8()) {
            double[] v = new double[rows * in];
            for (int i = 0; i < v.length; i++) {
                v[i] = (rnd.nextDouble() * 2 - 1) / Math.sqrt(in);
            }
            return new Weight(encode(t, v), null);
        }
        return new Weight(fp8.codes(rows * in), fp8.scales(type, rows, in));
    }

    /** The unfused one-token linear: y = w · x. */
    private void linear(DType t, WeightType type, long x, long w, long s, long y, int in, int rows) {
        if (type.fp8()) {
            k.fp8().gemv(t, type, x, w, s, y, 1, in, rows, false, stream);
        } else {
            k.gemv(t, x, w, y, in, rows, stream);
        }
    }

    /** A residual row: fp32 values of mixed magnitudes (the stream of a deep model grows), one large outlier. */
    private float[] residual(int in) {
        float[] r = new float[in];
        for (int i = 0; i < in; i++) {
            r[i] = (float) ((rnd.nextDouble() * 2 - 1) * Math.scalb(1.0, rnd.nextInt(6) - 2));
        }
        r[rnd.nextInt(in)] = 300f;
        return r;
    }

    private byte[] gamma(DType t, int in) {
        double[] g = new double[in];
        for (int i = 0; i < in; i++) {
            g[i] = 0.5 + rnd.nextDouble();
        }
        return encode(t, g);
    }

    void normCase(DType t, WeightType type, int in, int rows, boolean silu, FusedGemvVariant v, String name) {
        int wRows = silu ? 2 * rows : rows;
        Weight w = weight(t, type, wRows, in);
        byte[] r = floats(residual(in));
        byte[] g = gamma(t, in);
        float eps = 1e-5f;
        int outBytes = rows * t.bytes();
        int guardBytes = 64 * t.bytes();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dR = a.upload(r);
            long dG = a.upload(g);
            long dW = a.upload(w.data());
            long dS = w.scales() == null ? 0 : a.upload(floats(w.scales()));
            long dXn = a.poisoned((long) in * t.bytes());
            long dGu = a.poisoned((long) wRows * t.bytes());
            long dRef = a.poisoned((long) outBytes + guardBytes);
            long dY = a.poisoned((long) outBytes + guardBytes);
            k.addRmsNorm(t, dR, 0, dG, dXn, 1, in, eps, 2, stream);
            if (silu) {
                linear(t, type, dXn, dW, dS, dGu, in, wRows);
                k.siluMul(t, dGu, dRef, 1, rows, stream);
            } else {
                linear(t, type, dXn, dW, dS, dRef, in, rows);
            }
            k.fused().with(v).norm(t, type, dR, dG, eps, dW, dS, dY, in, rows, silu, stream);
            sync.run();
            byte[] ref = a.download(dRef, outBytes);
            byte[] got = a.download(dY, outBytes + guardBytes);
            long bad = differing(t, ref, Arrays.copyOf(got, outBytes)) + poisonBroken(got, outBytes, guardBytes);
            if (!Arrays.equals(a.download(dR, r.length), r)) {
                out.println("  gemv_norm " + t + " " + name + ": the residual changed");
                bad++;
            }
            report(silu ? "gemv_norm_silu" : "gemv_norm", t, name, ref, Arrays.copyOf(got, outBytes), t, bad);
        }
    }

    void resCase(DType t, WeightType type, int in, int rows, FusedGemvVariant v, String name) {
        Weight w = weight(t, type, rows, in);
        double[] xv = new double[in];
        for (int i = 0; i < in; i++) {
            xv[i] = rnd.nextDouble() * 2 - 1;
        }
        byte[] x = encode(t, xv);
        byte[] r = floats(residual(rows));
        byte[] g = gamma(t, rows);
        int rBytes = rows * 4;
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dW = a.upload(w.data());
            long dS = w.scales() == null ? 0 : a.upload(floats(w.scales()));
            long dG = a.upload(g);
            long dRef = a.upload(r);
            byte[] withGuard = Arrays.copyOf(r, rBytes + 256);
            Arrays.fill(withGuard, rBytes, withGuard.length, (byte) 0xFF);
            long dGot = a.upload(withGuard);
            long dD = a.poisoned((long) rows * t.bytes());
            long dXn = a.poisoned((long) rows * t.bytes());
            linear(t, type, dX, dW, dS, dD, in, rows);
            k.addRmsNorm(t, dRef, dD, dG, dXn, 1, rows, 1e-5f, 1, stream);
            k.fused().with(v).residual(t, type, dX, dW, dS, dGot, in, rows, stream);
            sync.run();
            byte[] ref = a.download(dRef, rBytes);
            byte[] got = a.download(dGot, rBytes + 256);
            long bad = differing(DType.fp32, ref, Arrays.copyOf(got, rBytes)) + poisonBroken(got, rBytes, 256);
            report("gemv_res", t, name, ref, Arrays.copyOf(got, rBytes), DType.fp32, bad);
        }
    }

    /** Elements of {@code e} whose bits differ. */
    private static long differing(DType e, byte[] ref, byte[] got) {
        int b = e.bytes();
        long n = 0;
        for (int i = 0; i < ref.length; i += b) {
            if (!Arrays.equals(ref, i, i + b, got, i, i + b)) {
                n++;
            }
        }
        return n;
    }

    private void report(String kernel, DType t, String name, byte[] ref, byte[] got, DType e, long bad) {
        double[] rv = HostTensors.decode(ref, e);
        double[] gv = HostTensors.decode(got, e);
        double maxAbs = 0;
        double maxRel = 0;
        for (int i = 0; i < rv.length; i++) {
            double d = Math.abs(gv[i] - rv[i]);
            if (!(d <= maxAbs)) {
                maxAbs = Double.isNaN(d) ? Double.POSITIVE_INFINITY : d;
            }
            if (rv[i] != 0) {
                maxRel = Math.max(maxRel, d / Math.abs(rv[i]));
            }
        }
        if (bad > 0) {
            out.println(
                    "  " + kernel + " " + t + " " + name + ": " + bad + " elements differ from the unfused kernels");
        }
        results.accept(Result.of(kernel, t, name, new Stat(maxAbs, maxRel, bad)));
    }
}
