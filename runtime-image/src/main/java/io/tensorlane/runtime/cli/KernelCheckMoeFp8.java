package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.compare;
import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.maxAbs;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.MoeReference;
import io.tensorlane.runtime.model.Fp8;
import io.tensorlane.runtime.model.WeightType;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the MoE expert linears over FP8 weights (tl_moe_fp8.cuh) against {@link MoeReference}
 * on the weights {@link Fp8#dequantize}d in double: stacked experts of random e4m3 codes (every finite one) with random
 * scales per block, per block row repeated per row, or per row, so a kernel that reads another expert's rows or scales,
 * or the wrong block, fails; widths of whole 16-byte chunks and widths that are not (the scalar path); repeated
 * experts; guard bytes after each output. And the long steps' dequantization of one expert's slice of a stacked weight
 * (its scales found at {@link WeightType#scaleOffset}), which feeds cuBLAS.
 */
final class KernelCheckMoeFp8 {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final Consumer<Result> results;
    private final KernelCheckFp8 fp8;

    KernelCheckMoeFp8(
            ModelKernels k,
            CUstream stream,
            SplittableRandom rnd,
            Runnable sync,
            Consumer<Result> results,
            KernelCheckFp8 fp8) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.results = results;
        this.fp8 = fp8;
    }

    void all(DType t, KernelCheckFp8.Guard guard) {
        // {n, experts, top-k, hidden, inter}: Qwen3-MoE-like rows (16-byte chunks, whole and partial 128-column blocks:
        // 448 = 3.5), one token over top-8, Qwen3-30B-A3B's hidden 2048 with its TP 2 share of 768 (rows of 128
        // chunks: the unrolled loads), 2560 (the unrolled loads and a remainder), and widths that are no multiple of 16
        // (200, 72: the scalar path; block-row and row layouts only: the compact grid needs each expert on a block)
        int[][] shapes = {
            {5, 8, 2, 512, 256},
            {1, 16, 8, 512, 128},
            {4, 4, 2, 384, 64},
            {1, 16, 8, 2048, 384},
            {2, 8, 2, 2560, 128},
            {3, 8, 2, 200, 72},
            {2, 4, 2, 448, 96}
        };
        for (WeightType type : WeightType.values()) {
            if (!type.fp8()) {
                continue;
            }
            String ty = type.name().toLowerCase(Locale.ROOT);
            for (int[] sh : shapes) {
                if (!stacks(type, sh[1], 2 * sh[4]) || !stacks(type, sh[1], sh[3])) {
                    continue;
                }
                String nm = ty + ",n=" + sh[0] + ",E=" + sh[1] + ",k=" + sh[2] + ",hidden=" + sh[3] + ",inter=" + sh[4];
                guard.run("moe_experts_fp8", t, nm, () -> expertCase(t, type, sh[0], sh[1], sh[2], sh[3], sh[4], nm));
            }
            // {experts, out, in, expert}: a gate/up slice and a down slice of 16-element and single-element rows
            for (int[] d : new int[][] {{8, 512, 256, 5}, {4, 256, 384, 3}, {4, 200, 72, 3}}) {
                if (!stacks(type, d[0], d[1])) {
                    continue;
                }
                String nm = ty + ",E=" + d[0] + ",out=" + d[1] + ",in=" + d[2] + ",expert=" + d[3];
                guard.run("moe_dequant_fp8", t, nm, () -> sliceCase(t, type, d[0], d[1], d[2], d[3], nm));
            }
        }
    }

    /** Whether every expert's [out, *] slice starts a scale row of {@code type} (the loader's rule for FP8_BLOCK). */
    private static boolean stacks(WeightType type, int experts, int out) {
        return type != WeightType.FP8_BLOCK || (out % WeightType.BLOCK == 0 || experts == 1);
    }

    void expertCase(DType t, WeightType type, int n, int experts, int topK, int hidden, int inter, String name) {
        int pairs = n * topK;
        int[] ids = new int[pairs];
        double[] weights = new double[pairs];
        float[] wf = new float[pairs];
        for (int p = 0; p < pairs; p++) {
            ids[p] = rnd.nextInt(experts);
            wf[p] = (float) rnd.nextDouble();
            weights[p] = wf[p];
        }
        ids[0] = experts - 1; // the last expert's rows and scales are read
        if (pairs > 1) {
            ids[pairs - 1] = ids[0]; // and one expert twice
        }
        int gu = 2 * inter;
        byte[] x = encode(t, uniform(n * hidden));
        byte[] act = encode(t, uniform(pairs * inter));
        byte[] wgu = fp8.codes(experts * gu * hidden);
        byte[] wd = fp8.codes(experts * hidden * inter);
        float[] sgu = fp8.scales(type, experts * gu, hidden);
        float[] sd = fp8.scales(type, experts * hidden, inter);
        int guard = 64;
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dAct = a.upload(act);
            long dWgu = a.upload(wgu);
            long dWd = a.upload(wd);
            long dSgu = a.upload(floats(sgu));
            long dSd = a.upload(floats(sd));
            long dIds = a.upload(ints(ids));
            long dWts = a.upload(floats(wf));
            int guBytes = pairs * gu * t.bytes();
            int downBytes = n * hidden * t.bytes();
            long dGu = a.poisoned(guBytes + guard);
            long dPairs = a.poisoned(4L * pairs * hidden + guard);
            long dY = a.poisoned(downBytes + guard);
            k.moe().gateUpFp8(t, type, dX, dWgu, dSgu, dGu, dIds, n, topK, hidden, gu, stream);
            k.moe().downFp8(t, type, dAct, dWd, dSd, dPairs, dIds, pairs, inter, hidden, stream);
            k.moe().combine(t, dPairs, 0, dWts, dY, n, topK, hidden, stream);
            sync.run();
            double[] xd = HostTensors.decode(x, t);
            double[] actd = HostTensors.decode(act, t);
            double[] wgud = Fp8.dequantize(wgu, sgu, type, experts * gu, hidden);
            double[] wdd = Fp8.dequantize(wd, sd, type, experts * hidden, inter);
            byte[] rawGu = a.download(dGu, guBytes + guard);
            byte[] rawPairs = a.download(dPairs, 4 * pairs * hidden + guard);
            byte[] rawY = a.download(dY, downBytes + guard);
            KernelCheckMoe.judgePairs(
                    results, "_fp8", t, name, xd, wgud, actd, wdd, ids, weights, n, topK, hidden, inter, rawGu,
                    rawPairs, rawY, guard);
        }
    }

    /** Expert {@code e}'s [out, in] slice of a stacked [experts x out, in] FP8 weight, dequantized to T. */
    void sliceCase(DType t, WeightType type, int experts, int out, int in, int e, String name) {
        byte[] w = fp8.codes(experts * out * in);
        float[] s = fp8.scales(type, experts * out, in);
        int bytes = out * in * t.bytes();
        int guard = 64;
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dW = a.upload(w);
            long dS = a.upload(floats(s));
            long dOut = a.poisoned(bytes + guard);
            long wAt = dW + (long) e * out * in;
            long sAt = dS + 4L * type.scaleOffset((long) e * out, in);
            k.fp8().dequant(t, type, wAt, sAt, dOut, out, in, stream);
            sync.run();
            double[] all = Fp8.dequantize(w, s, type, experts * out, in);
            double[] ref = Arrays.copyOfRange(all, e * out * in, (e + 1) * out * in);
            byte[] raw = a.download(dOut, bytes + guard);
            // one fp32 product (exact inputs), then one rounding to T, as KernelCheckFp8's dequantization cases
            Stat st = compare(
                    HostTensors.decode(Arrays.copyOf(raw, bytes), t),
                    ref,
                    HostTensors.unitRoundoff(t),
                    0x1p-24,
                    maxAbs(ref));
            long touched = poisonBroken(raw, bytes, guard);
            results.accept(
                    Result.of("moe_dequant_fp8", t, name, new Stat(st.maxAbs(), st.maxRel(), st.bad() + touched)));
        }
    }

    private double[] uniform(int count) {
        double[] v = new double[count];
        for (int i = 0; i < count; i++) {
            v[i] = rnd.nextDouble() * 2 - 1;
        }
        return v;
    }
}
