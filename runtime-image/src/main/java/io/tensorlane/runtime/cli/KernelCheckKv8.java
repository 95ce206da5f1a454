package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.compare;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.ModelReference;
import io.tensorlane.runtime.model.Fp8;
import java.io.PrintWriter;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the FP8 KV cache (tl_kvcache.cuh): the KV write's codes against the host's e4m3
 * encode of the same step's 16-bit cache, bit for bit; and both attention kernels (and the per-head one) over e4m3
 * codes against the fp64 reference of the codes' values (the bound of the 16-bit cases), with the distance to the
 * same batch over its 16-bit cache reported beside it.
 */
final class KernelCheckKv8 {
    /**
     * The bound of the fp8-vs-16-bit distance (magnitude 1): e4m3 keeps 3 mantissa bits (relative rounding 2^-4 per
     * element), which the softmax's average shrinks; a wrong scale or a misread byte is caught by the tight comparison
     * with the codes' own reference, this line reports the cost of the format.
     */
    static final double FP8_DISTANCE = 0.125;

    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> add;

    KernelCheckKv8(
            ModelKernels k,
            CUstream stream,
            SplittableRandom rnd,
            Runnable sync,
            PrintWriter out,
            Consumer<Result> add) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.out = out;
        this.add = add;
    }

    /** Runs every case for {@code t}; {@code guard} turns an exception of one case into its FAIL line. */
    void all(DType t, KernelCheckFp8.Guard guard) {
        for (int hd : new int[] {64, 128}) {
            for (boolean norm : new boolean[] {false, true}) {
                String nm = "kv8,hd=" + hd + ",qknorm=" + norm;
                guard.run("qkv_rope", t, nm, () -> writeCase(t, hd, norm, nm));
            }
        }
        KernelCheckAttention ac = new KernelCheckAttention(k, stream, rnd, sync);
        int[][] heads = {{8, 2}, {16, 2}, {12, 1}, {32, 8}};
        for (KernelCheckAttention.Layout layout : KernelCheckAttention.Layout.values()) {
            boolean prefill = layout == KernelCheckAttention.Layout.PREFILL;
            for (int[] hc : heads) {
                for (int hd : prefill ? new int[] {64, 128} : new int[] {64, 96, 128, 256}) {
                    for (boolean unit : new boolean[] {false, true}) {
                        String nm = "kv8," + (prefill ? "prefill," : "") + "hq=" + hc[0] + ",hk=" + hc[1] + ",hd=" + hd
                                + (unit ? ",scales=1" : ",scales=amax/448");
                        guard.run("attention", t, nm, () -> attentionCase(ac, t, hc[0], hc[1], hd, layout, unit, nm));
                    }
                }
            }
        }
    }

    /**
     * The same qkv through the KV write twice: into a 16-bit cache and into an FP8 one with random scales (small
     * enough that the largest values saturate at 448). q must be the same bits; every written code must be {@link
     * Fp8#encode}(float(16-bit value) / scale) of the 16-bit cache's element; every other slot keeps its poison.
     */
    void writeCase(DType t, int hd, boolean withNorm, String nm) {
        int hq = 8;
        int hk = 2;
        int heads = hq + 2 * hk;
        int maxPos = 4096;
        int[] positions = {0, 1, 17, 4095, 300, 2048, 5};
        int[] slots = {3, 17, -1, 0, 23, -1, 9};
        int n = positions.length;
        int numSlots = 24;
        int row = hk * hd;
        float[][] cs = ModelReference.ropeTables(maxPos, hd, 1e6);
        byte[] qkv = HostTensors.random(t, (long) n * heads * hd, rnd.nextLong());
        double[] w = new double[hd];
        for (int i = 0; i < hd; i++) {
            w[i] = 0.5 + rnd.nextDouble();
        }
        byte[] norm = withNorm ? KernelCheckMath.encode(t, w) : null;
        // values reach ~1.5 (|x| < 1, norm weights < 1.5): scales down to 1/512 push some past 448
        float[] scales = {(float) (1.0 / (128 + rnd.nextInt(384))), (float) (1.0 / (128 + rnd.nextInt(384)))};
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dQkv = a.upload(qkv);
            long dNorm = norm == null ? 0 : a.upload(norm);
            long dCos = a.upload(floats(cs[0]));
            long dSin = a.upload(floats(cs[1]));
            long dPos = a.upload(ints(positions));
            long dSlots = a.upload(ints(slots));
            long dScales = a.upload(floats(scales));
            long qBytes = (long) n * hq * hd * t.bytes();
            long dQ16 = a.poisoned(qBytes);
            long dQ8 = a.poisoned(qBytes);
            long dK16 = a.poisoned((long) numSlots * row * t.bytes());
            long dV16 = a.poisoned((long) numSlots * row * t.bytes());
            long dK8 = a.poisoned((long) numSlots * row);
            long dV8 = a.poisoned((long) numSlots * row);
            k.qkvRope(
                    t, dQkv, 0, dNorm, dNorm, 1e-6f, dCos, dSin, dPos, dSlots, dQ16, dK16, dV16, n, hq, hk, hd, 0,
                    stream);
            k.qkvRope(
                    t, dQkv, 0, dNorm, dNorm, 1e-6f, dCos, dSin, dPos, dSlots, dQ8, dK8, dV8, n, hq, hk, hd, dScales,
                    stream);
            sync.run();
            byte[] q16 = a.download(dQ16, (int) qBytes);
            byte[] q8 = a.download(dQ8, (int) qBytes);
            long qDiff = 0;
            for (int i = 0; i < q16.length; i++) {
                qDiff += q16[i] != q8[i] ? 1 : 0;
            }
            add.accept(new Result("qkv_rope", t.name(), nm + ",q bits", qDiff, qDiff, qDiff == 0));
            check(
                    t,
                    nm + ",k codes",
                    a.download(dK16, numSlots * row * t.bytes()),
                    a.download(dK8, numSlots * row),
                    scales[0],
                    slots,
                    row);
            check(
                    t,
                    nm + ",v codes",
                    a.download(dV16, numSlots * row * t.bytes()),
                    a.download(dV8, numSlots * row),
                    scales[1],
                    slots,
                    row);
        }
    }

    /** Codes of the written slots against the host encode of the 16-bit cache; unwritten slots still poisoned. */
    private void check(DType t, String nm, byte[] raw16, byte[] c8, float scale, int[] slots, int row) {
        double[] c16 = HostTensors.decode(raw16, t);
        boolean[] written = new boolean[c8.length / row];
        long wrong = 0;
        long saturated = 0;
        for (int slot : slots) {
            if (slot < 0) {
                continue;
            }
            written[slot] = true;
            for (int e = 0; e < row; e++) {
                int i = slot * row + e;
                byte want = Fp8.encode((float) c16[i] / scale);
                wrong += c8[i] != want ? 1 : 0;
                saturated += (want & 0x7f) == 0x7e ? 1 : 0;
            }
        }
        long touched = 0;
        for (int s = 0; s < written.length; s++) {
            if (!written[s]) {
                touched += poisonBroken(c8, (long) s * row, row);
            }
        }
        if (wrong + touched > 0) {
            out.println("  qkv_rope " + t + " " + nm + ": " + wrong + " codes differ from the host encode, " + touched
                    + " bytes written outside the tokens' slots");
        }
        add.accept(new Result(
                "qkv_rope", t.name(), nm + ",saturated=" + saturated, wrong + touched, wrong, wrong + touched == 0));
    }

    /**
     * A batch's 16-bit cache quantized on the host (scale amax/448 of each cache, or 1.0), run through the kernels over
     * the codes: checked against the fp64 reference of the codes' values, and measured against the 16-bit run.
     */
    void attentionCase(
            KernelCheckAttention ac,
            DType t,
            int hq,
            int hk,
            int hd,
            KernelCheckAttention.Layout layout,
            boolean unitScales,
            String nm) {
        KernelCheckAttention.Batch b = ac.batch(t, hq, hk, hd, layout);
        double scale = 1 / Math.sqrt(hd);
        double[] kv = HostTensors.decode(b.kc(), t);
        double[] vv = HostTensors.decode(b.vc(), t);
        float[] scales = unitScales ? new float[] {1f, 1f} : new float[] {amax(b, kv) / Fp8.MAX, amax(b, vv) / Fp8.MAX};
        byte[] k8 = quantize(b, kv, scales[0]);
        byte[] v8 = quantize(b, vv, scales[1]);
        double[] got8 = ac.run(b, k8, v8, scales, scale);
        double[] ref8 = b.reference(dequantize(k8, scales[0]), dequantize(v8, scales[1]), scale);
        String tiles = b.plan().numTiles() > 0
                ? ",tiles=" + b.plan().numTiles() + "+" + b.plan().rest().length
                : "";
        Stat s = compare(got8, ref8, HostTensors.unitRoundoff(t), KernelCheckCommand.KAPPA_ATTENTION, 1.0);
        add.accept(Result.of("attention", t, nm + tiles, s));
        double[] got16 = ac.run(b, b.kc(), b.vc(), null, scale);
        Stat d = compare(got8, got16, 0, FP8_DISTANCE, 1.0);
        add.accept(Result.of("attention", t, nm + ",vs 16-bit cache", d));
    }

    /** Largest |value| over the slots that hold keys. */
    private static float amax(KernelCheckAttention.Batch b, double[] c) {
        float m = 0;
        for (int s = 0; s < b.used().length; s++) {
            if (b.used()[s]) {
                for (int e = 0; e < b.row(); e++) {
                    m = Math.max(m, (float) Math.abs(c[s * b.row() + e]));
                }
            }
        }
        return m;
    }

    /** e4m3 codes of the used slots' values / scale; unused slots stay NaN (0xFF). */
    private static byte[] quantize(KernelCheckAttention.Batch b, double[] c, float scale) {
        byte[] codes = new byte[c.length];
        java.util.Arrays.fill(codes, (byte) 0xFF);
        for (int s = 0; s < b.used().length; s++) {
            if (b.used()[s]) {
                for (int e = 0; e < b.row(); e++) {
                    int i = s * b.row() + e;
                    codes[i] = Fp8.encode((float) c[i] / scale);
                }
            }
        }
        return codes;
    }

    private static double[] dequantize(byte[] codes, float scale) {
        double[] v = new double[codes.length];
        for (int i = 0; i < codes.length; i++) {
            v[i] = (double) Fp8.decode(codes[i]) * scale;
        }
        return v;
    }
}
