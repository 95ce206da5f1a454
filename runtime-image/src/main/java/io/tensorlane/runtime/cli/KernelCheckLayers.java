package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckCommand.KAPPA;
import static io.tensorlane.runtime.cli.KernelCheckMath.compare;
import static io.tensorlane.runtime.cli.KernelCheckMath.compareLinear;
import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.maxAbs;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;
import static io.tensorlane.runtime.cli.KernelCheckMath.toDouble;
import static io.tensorlane.runtime.cli.KernelCheckMath.unbox;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.ModelReference;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the elementwise and row kernels (embed, add_rmsnorm, qkv_rope, silu_mul, gather_rows):
 * each runs the kernel once into poisoned outputs and hands one {@link Result} per output, compared with
 * {@link ModelReference}, to the command.
 */
final class KernelCheckLayers {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;

    /** Cases on {@code stream} drawing from {@code rnd}; {@code results} gets each checked output, {@code out} details. */
    KernelCheckLayers(
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

    void embedCase(DType t, int hidden) {
        int vocabStart = 256;
        int vocabRows = 300;
        int[] ids = {256, 555, 556, 255, 0, 999, 300, -5, 400};
        int n = ids.length;
        byte[] table = HostTensors.random(t, (long) vocabRows * hidden, rnd.nextLong());
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dIds = a.upload(ints(ids));
            long dTable = a.upload(table);
            long dOut = a.poisoned((long) n * hidden * t.bytes());
            k.embed(t, dIds, n, dTable, vocabStart, vocabRows, hidden, dOut, stream);
            sync();
            double[] ref = ModelReference.embed(ids, HostTensors.decode(table, t), vocabStart, vocabRows, hidden);
            add(Result.of(
                    "embed",
                    t,
                    "hidden=" + hidden,
                    compare(HostTensors.decode(a.download(dOut, n * hidden * t.bytes()), t), ref, 0, 0, 0)));
        }
    }

    void rmsnormCase(DType t, int hidden, int mode) {
        int n = 5;
        float eps = 1e-6f;
        float[] residual = new float[n * hidden];
        for (int i = 0; i < residual.length; i++) {
            residual[i] = (float) (rnd.nextDouble() * 4 - 2);
        }
        byte[] delta = HostTensors.random(t, (long) n * hidden, rnd.nextLong());
        byte[] weight = encode(t, uniform(hidden, 0.5, 1.5));
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dRes = mode == 0 ? a.poisoned((long) n * hidden * 4) : a.upload(floats(residual));
            long dDelta = mode == 2 ? 0 : a.upload(delta);
            long dWeight = a.upload(weight);
            long dOut = a.poisoned((long) n * hidden * t.bytes());
            k.addRmsNorm(t, dRes, dDelta, dWeight, dOut, n, hidden, eps, mode, stream);
            sync();
            double[] resIn = new double[residual.length];
            for (int i = 0; i < residual.length; i++) {
                resIn[i] = residual[i];
            }
            ModelReference.Norm ref = ModelReference.addRmsNorm(
                    resIn, HostTensors.decode(delta, t), HostTensors.decode(weight, t), n, hidden, eps, mode);
            double[] gotRes = HostTensors.decode(a.download(dRes, n * hidden * 4), DType.fp32);
            double[] gotOut = HostTensors.decode(a.download(dOut, n * hidden * t.bytes()), t);
            String nm = "hidden=" + hidden + ",mode=" + mode;
            add(Result.of(
                    "add_rmsnorm",
                    t,
                    nm + ",residual",
                    compare(gotRes, ref.residual(), HostTensors.unitRoundoff(DType.fp32), 0, 0)));
            add(Result.of(
                    "add_rmsnorm",
                    t,
                    nm + ",out",
                    compare(gotOut, ref.out(), HostTensors.unitRoundoff(t), KAPPA, maxAbs(ref.out()))));
        }
    }

    void ropeCase(DType t, int hd, boolean withBias, boolean withNorm) {
        int hq = 8;
        int hk = 2;
        int heads = hq + 2 * hk;
        int maxPos = 4096;
        int[] positions = {0, 1, 17, 4095, 300, 2048, 5};
        int[] slots = {3, 17, -1, 0, 23, -1, 9};
        int n = positions.length;
        int numSlots = 24;
        float eps = 1e-6f;
        float[][] cs = ModelReference.ropeTables(maxPos, hd, 1e6);
        byte[] qkv = HostTensors.random(t, (long) n * heads * hd, rnd.nextLong());
        byte[] bias = withBias ? encode(t, uniform(heads * hd, -0.5, 0.5)) : null;
        byte[] qNorm = withNorm ? encode(t, uniform(hd, 0.5, 1.5)) : null;
        byte[] kNorm = withNorm ? encode(t, uniform(hd, 0.5, 1.5)) : null;
        long cacheBytes = (long) numSlots * hk * hd * t.bytes();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dQkv = a.upload(qkv);
            long dBias = bias == null ? 0 : a.upload(bias);
            long dQn = qNorm == null ? 0 : a.upload(qNorm);
            long dKn = kNorm == null ? 0 : a.upload(kNorm);
            long dCos = a.upload(floats(cs[0]));
            long dSin = a.upload(floats(cs[1]));
            long dPos = a.upload(ints(positions));
            long dSlots = a.upload(ints(slots));
            long dQ = a.poisoned((long) n * hq * hd * t.bytes());
            long dK = a.poisoned(cacheBytes);
            long dV = a.poisoned(cacheBytes);
            k.qkvRope(t, dQkv, dBias, dQn, dKn, eps, dCos, dSin, dPos, dSlots, dQ, dK, dV, n, hq, hk, hd, 0, stream);
            sync();
            ModelReference.Qkv ref = ModelReference.qkvRope(
                    HostTensors.decode(qkv, t),
                    bias == null ? null : HostTensors.decode(bias, t),
                    qNorm == null ? null : HostTensors.decode(qNorm, t),
                    kNorm == null ? null : HostTensors.decode(kNorm, t),
                    eps,
                    toDouble(cs[0]),
                    toDouble(cs[1]),
                    positions,
                    n,
                    hq,
                    hk,
                    hd);
            double u = HostTensors.unitRoundoff(t);
            String nm = "hd=" + hd + ",bias=" + withBias + ",qknorm=" + withNorm;
            double[] gotQ = HostTensors.decode(a.download(dQ, n * hq * hd * t.bytes()), t);
            add(Result.of("qkv_rope", t, nm + ",q", compare(gotQ, ref.q(), u, KAPPA, maxAbs(ref.q()))));
            byte[] kRaw = a.download(dK, (int) cacheBytes);
            byte[] vRaw = a.download(dV, (int) cacheBytes);
            int row = hk * hd;
            // Rows of tokens with a slot must hold k / v; every other slot must still hold the poison (slot < 0: no
            // write).
            List<Double> gotK = new ArrayList<>();
            List<Double> refK = new ArrayList<>();
            List<Double> gotV = new ArrayList<>();
            List<Double> refV = new ArrayList<>();
            double[] kc = HostTensors.decode(kRaw, t);
            double[] vc = HostTensors.decode(vRaw, t);
            Set<Integer> written = new HashSet<>();
            for (int i = 0; i < n; i++) {
                if (slots[i] >= 0) {
                    written.add(slots[i]);
                    for (int e = 0; e < row; e++) {
                        gotK.add(kc[slots[i] * row + e]);
                        refK.add(ref.k()[i * row + e]);
                        gotV.add(vc[slots[i] * row + e]);
                        refV.add(ref.v()[i * row + e]);
                    }
                }
            }
            long touched = 0;
            for (int s = 0; s < numSlots; s++) {
                if (!written.contains(s)) {
                    touched += poisonBroken(kRaw, (long) s * row * t.bytes(), row * t.bytes())
                            + poisonBroken(vRaw, (long) s * row * t.bytes(), row * t.bytes());
                }
            }
            if (touched > 0) {
                out.println("  qkv_rope " + t + " " + nm + ": " + touched + " bytes written outside the tokens' slots");
            }
            double[] rk = unbox(refK);
            double[] rv = unbox(refV);
            Stat sk = compare(unbox(gotK), rk, u, KAPPA, maxAbs(rk));
            Stat sv = compare(unbox(gotV), rv, u, KAPPA, maxAbs(rv));
            add(Result.of("qkv_rope", t, nm + ",k_cache", new Stat(sk.maxAbs(), sk.maxRel(), sk.bad() + touched)));
            add(Result.of("qkv_rope", t, nm + ",v_cache", sv));
        }
    }

    void siluCase(DType t) {
        int n = 5;
        int inter = 1000;
        byte[] gu = encode(t, uniform(n * 2 * inter, -6, 6));
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dIn = a.upload(gu);
            long dOut = a.poisoned((long) n * inter * t.bytes());
            k.siluMul(t, dIn, dOut, n, inter, stream);
            sync();
            double[] ref = ModelReference.siluMul(HostTensors.decode(gu, t), n, inter);
            double[] got = HostTensors.decode(a.download(dOut, n * inter * t.bytes()), t);
            add(Result.of(
                    "silu_mul",
                    t,
                    "n=5,inter=1000",
                    compare(got, ref, HostTensors.unitRoundoff(t), KAPPA, maxAbs(ref))));
        }
    }

    /**
     * The single-token linear against fp64: x [in] and w [out, in] uniform in [-1, 1]; bound u*|ref| + in*2^-24*M
     * with M the largest sum_k |x*w| of an output (the worst-case error of an fp32 dot product of length in). The bytes
     * after the outputs are poisoned guard space the kernel must not touch.
     */
    void gemvCase(DType t, int in, int rows) {
        gemvCase(t, 1, in, rows, false);
    }

    /** The same for n tokens; {@code mma}: the tensor-core kernel (tl_gemv_mma*), else the warp-per-row one (n = 1). */
    void gemvCase(DType t, int n, int in, int rows, boolean mma) {
        byte[] x = encode(t, uniform(n * in, -1, 1));
        byte[] w = encode(t, uniform(in * rows, -1, 1));
        int outBytes = n * rows * t.bytes();
        int guard = rows * t.bytes();
        String kernel = mma ? "gemv_mma" : "gemv";
        String name = (mma ? "n=" + n + "," : "") + "in=" + in + ",out=" + rows;
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dW = a.upload(w);
            long dY = a.poisoned((long) outBytes + guard);
            if (mma) {
                k.gemvMma(t, dX, dW, dY, n, in, rows, stream);
            } else {
                k.gemv(t, dX, dW, dY, in, rows, stream);
            }
            sync();
            double[] xd = HostTensors.decode(x, t);
            double[] wd = HostTensors.decode(w, t);
            byte[] raw = a.download(dY, outBytes + guard);
            double[] got = HostTensors.decode(Arrays.copyOf(raw, outBytes), t);
            Stat st = compareLinear(got, xd, wd, n, in, rows, HostTensors.unitRoundoff(t), in * 0x1p-24);
            long touched = poisonBroken(raw, outBytes, guard);
            if (touched > 0) {
                out.println("  " + kernel + " " + t + " " + name + ": " + touched + " bytes written past the output");
            }
            add(Result.of(kernel, t, name, new Stat(st.maxAbs(), st.maxRel(), st.bad() + touched)));
        }
    }

    void gatherCase(DType t) {
        int cols = 700;
        int[] rows = {5, 0, 19, 5, 3, 18};
        byte[] in = HostTensors.random(t, 20L * cols, rnd.nextLong());
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dIn = a.upload(in);
            long dRows = a.upload(ints(rows));
            long dOut = a.poisoned((long) rows.length * cols * t.bytes());
            k.gatherRows(t, dIn, dRows, dOut, rows.length, cols, stream);
            sync();
            double[] ref = ModelReference.gatherRows(HostTensors.decode(in, t), rows, cols);
            double[] got = HostTensors.decode(a.download(dOut, rows.length * cols * t.bytes()), t);
            add(Result.of("gather_rows", t, "m=6,cols=700", compare(got, ref, 0, 0, 0)));
        }
    }

    private double[] uniform(int count, double lo, double hi) {
        double[] v = new double[count];
        for (int i = 0; i < count; i++) {
            v[i] = lo + rnd.nextDouble() * (hi - lo);
        }
        return v;
    }

    private void add(Result r) {
        results.accept(r);
    }

    private void sync() {
        sync.run();
    }
}
