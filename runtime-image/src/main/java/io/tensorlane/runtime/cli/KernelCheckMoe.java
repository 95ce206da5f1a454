package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.compare;
import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.maxAbs;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.MoeReference;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the Mixture-of-Experts kernels against {@link MoeReference}: routing (ids exact, the
 * ties of logits on a 1/8 grid broken towards the lower expert, weights to fp32 rounding; a row of NaN must still give
 * k distinct experts in range), and the expert linears over routed pairs (vector rows and a width that is no multiple
 * of 8, repeated experts, outputs bounded like the GEMV's, poisoned guard bytes after each output untouched).
 */
final class KernelCheckMoe {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;

    KernelCheckMoe(
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

    /** n tokens over {@code experts} with top-k; the last token's logits are all NaN when {@code nanRow}. */
    void routeCase(int n, int experts, int topK, boolean norm, boolean nanRow) {
        float[] logits = new float[n * experts];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (rnd.nextInt(65) - 32) / 8.0f; // ties on purpose
        }
        if (nanRow) {
            Arrays.fill(logits, (n - 1) * experts, n * experts, Float.NaN);
        }
        String name = "n=" + n + ",E=" + experts + ",k=" + topK + ",norm=" + norm + (nanRow ? ",nan-row" : "");
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dL = a.upload(floats(logits));
            int pairs = n * topK;
            long dIds = a.poisoned(4L * pairs + 64);
            long dW = a.poisoned(4L * pairs + 64);
            k.moe().route(dL, n, experts, topK, norm, dIds, dW, stream);
            sync.run();
            byte[] rawIds = a.download(dIds, 4 * pairs + 64);
            byte[] rawW = a.download(dW, 4 * pairs + 64);
            int[] ids = toInts(Arrays.copyOf(rawIds, 4 * pairs));
            double[] w = fp32(Arrays.copyOf(rawW, 4 * pairs));
            int checked = nanRow ? n - 1 : n;
            double[] ld = new double[checked * experts];
            for (int i = 0; i < ld.length; i++) {
                ld[i] = logits[i];
            }
            MoeReference.Routing ref = MoeReference.route(ld, checked, experts, topK, norm);
            long bad = poisonBroken(rawIds, 4L * pairs, 64) + poisonBroken(rawW, 4L * pairs, 64);
            for (int i = 0; i < checked * topK; i++) {
                if (ids[i] != ref.ids()[i]) {
                    bad++;
                }
            }
            if (nanRow) {
                Set<Integer> seen = new HashSet<>();
                for (int s = 0; s < topK; s++) {
                    int id = ids[(n - 1) * topK + s];
                    if (id < 0 || id >= experts || !seen.add(id)) {
                        bad++;
                    }
                }
            }
            Stat sw = compare(Arrays.copyOf(w, checked * topK), ref.weights(), 0x1p-20, 0, maxAbs(ref.weights()));
            if (bad > 0) {
                out.println("  moe_route " + name + ": " + bad + " ids differ from the reference or guard bytes hit");
            }
            results.accept(
                    Result.of("moe_route", DType.fp32, name, new Stat(sw.maxAbs(), sw.maxRel(), sw.bad() + bad)));
        }
    }

    /**
     * gate_up over n tokens x k pairs and down with its weighted sum, both against double: x, w uniform in [-1, 1];
     * ids drawn with repeats; bound u*|ref| + in*2^-24*M as for the GEMV (M: the largest sum of |terms|).
     */
    void expertCase(DType t, int n, int experts, int topK, int hidden, int inter) {
        int pairs = n * topK;
        int[] ids = new int[pairs];
        double[] weights = new double[pairs];
        for (int p = 0; p < pairs; p++) {
            ids[p] = rnd.nextInt(experts);
            weights[p] = rnd.nextDouble();
        }
        ids[0] = experts - 1; // the last expert's rows are read
        String name = "n=" + n + ",E=" + experts + ",k=" + topK + ",hidden=" + hidden + ",inter=" + inter;
        byte[] x = encode(t, uniform(n * hidden));
        byte[] wgu = encode(t, uniform(experts * 2 * inter * hidden));
        byte[] act = encode(t, uniform(pairs * inter));
        byte[] wd = encode(t, uniform(experts * hidden * inter));
        float[] wf = new float[pairs];
        for (int p = 0; p < pairs; p++) {
            wf[p] = (float) weights[p];
            weights[p] = wf[p];
        }
        int guard = 64;
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dWgu = a.upload(wgu);
            long dAct = a.upload(act);
            long dWd = a.upload(wd);
            long dIds = a.upload(ints(ids));
            long dWts = a.upload(floats(wf));
            int guBytes = pairs * 2 * inter * t.bytes();
            int downBytes = n * hidden * t.bytes();
            long dGu = a.poisoned(guBytes + guard);
            long dPairs = a.poisoned(4L * pairs * hidden + guard);
            long dY = a.poisoned(downBytes + guard);
            k.moe().gateUp(t, dX, dWgu, dGu, dIds, n, topK, hidden, 2 * inter, stream);
            k.moe().down(t, dAct, dWd, dPairs, dIds, pairs, inter, hidden, stream);
            k.moe().combine(t, dPairs, 0, dWts, dY, n, topK, hidden, stream);
            sync.run();
            double[] xd = HostTensors.decode(x, t);
            double[] wgud = HostTensors.decode(wgu, t);
            double[] actd = HostTensors.decode(act, t);
            double[] wdd = HostTensors.decode(wd, t);
            byte[] rawGu = a.download(dGu, guBytes + guard);
            byte[] rawPairs = a.download(dPairs, 4 * pairs * hidden + guard);
            byte[] rawY = a.download(dY, downBytes + guard);
            judgePairs(
                    results, "", t, name, xd, wgud, actd, wdd, ids, weights, n, topK, hidden, inter, rawGu, rawPairs,
                    rawY, guard);
        }
    }

    /**
     * The grouping of long steps: tl_moe_sort's counts, offsets, token order (stable: each expert's pairs in pair order)
     * and inverse exactly as the host computes them; then tl_moe_combine un-permuting T rows placed in that order,
     * against double (one rounding of each row, then the weighted sum).
     */
    void groupedCase(DType t, int n, int experts, int topK, int cols) {
        int pairs = n * topK;
        int[] ids = new int[pairs];
        for (int p = 0; p < pairs; p++) {
            ids[p] = rnd.nextInt(Math.max(1, experts / 2)) * 2; // half the experts get nothing
        }
        int[] counts = new int[experts];
        for (int id : ids) {
            counts[id]++;
        }
        int[] offsets = new int[experts + 1];
        for (int e = 0; e < experts; e++) {
            offsets[e + 1] = offsets[e] + counts[e];
        }
        int[] sortedTok = new int[pairs];
        int[] inv = new int[pairs];
        int[] cursor = Arrays.copyOf(offsets, experts);
        for (int p = 0; p < pairs; p++) {
            int j = cursor[ids[p]]++;
            sortedTok[j] = p / topK;
            inv[p] = j;
        }
        String name = "n=" + n + ",E=" + experts + ",k=" + topK + ",cols=" + cols;
        byte[] ys = encode(t, uniform(pairs * cols));
        float[] wf = new float[pairs];
        double[] w = new double[pairs];
        for (int p = 0; p < pairs; p++) {
            wf[p] = (float) rnd.nextDouble();
            w[p] = wf[p];
        }
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dIds = a.upload(ints(ids));
            long dCounts = a.poisoned(4L * experts);
            long dOffsets = a.poisoned(4L * (experts + 1));
            long dTok = a.poisoned(4L * pairs);
            long dInv = a.poisoned(4L * pairs);
            k.moe().sort(dIds, pairs, experts, topK, dCounts, dOffsets, dTok, dInv, stream);
            long dYs = a.upload(ys);
            long dW = a.upload(floats(wf));
            long dInvHost = a.upload(ints(inv));
            long dY = a.poisoned((long) n * cols * t.bytes());
            k.moe().combine(t, dYs, dInvHost, dW, dY, n, topK, cols, stream);
            sync.run();
            long bad = mismatches(toInts(a.download(dCounts, 4 * experts)), counts)
                    + mismatches(toInts(a.download(dOffsets, 4 * (experts + 1))), offsets)
                    + mismatches(toInts(a.download(dTok, 4 * pairs)), sortedTok)
                    + mismatches(toInts(a.download(dInv, 4 * pairs)), inv);
            if (bad > 0) {
                out.println("  moe_sort " + name + ": " + bad + " entries differ from the host's stable grouping");
            }
            results.accept(Result.of("moe_sort", DType.fp32, name, new Stat(bad, bad, bad)));
            double[] yd = HostTensors.decode(ys, t);
            double[] ref = new double[n * cols];
            double[] mag = new double[n * cols];
            for (int tok = 0; tok < n; tok++) {
                for (int s = 0; s < topK; s++) {
                    int p = tok * topK + s;
                    for (int o = 0; o < cols; o++) {
                        ref[tok * cols + o] += w[p] * yd[inv[p] * cols + o];
                        mag[tok * cols + o] += Math.abs(w[p] * yd[inv[p] * cols + o]);
                    }
                }
            }
            Stat sc = compare(
                    HostTensors.decode(a.download(dY, n * cols * t.bytes()), t),
                    ref,
                    HostTensors.unitRoundoff(t),
                    topK * 0x1p-24,
                    maxAbs(mag));
            results.accept(Result.of("moe_combine", t, name, sc));
        }
    }

    private static long mismatches(int[] got, int[] want) {
        long bad = 0;
        for (int i = 0; i < want.length; i++) {
            if (got[i] != want[i]) {
                bad++;
            }
        }
        return bad;
    }

    private double[] uniform(int count) {
        double[] v = new double[count];
        for (int i = 0; i < count; i++) {
            v[i] = rnd.nextDouble() * 2 - 1;
        }
        return v;
    }

    /**
     * The pair kernels' outputs against fp64 of the same (decoded, or dequantized) inputs: gate_up of every pair
     * ({@code moe_gate_up<suffix>}), down + combine ({@code moe_down<suffix>}), each with its guard bytes (the outputs
     * were poisoned first; a guard byte changed is a bad element).
     */
    static void judgePairs(
            Consumer<Result> results,
            String suffix,
            DType t,
            String name,
            double[] xd,
            double[] wgud,
            double[] actd,
            double[] wdd,
            int[] ids,
            double[] weights,
            int n,
            int topK,
            int hidden,
            int inter,
            byte[] rawGu,
            byte[] rawPairs,
            byte[] rawY,
            int guard) {
        int pairs = n * topK;
        int guBytes = pairs * 2 * inter * t.bytes();
        int downBytes = n * hidden * t.bytes();
        double u = HostTensors.unitRoundoff(t);
        double[] refGu = MoeReference.gateUp(xd, wgud, ids, n, topK, hidden, 2 * inter);
        double[] magGu = MoeReference.gateUp(abs(xd), abs(wgud), ids, n, topK, hidden, 2 * inter);
        Stat sg = compare(
                HostTensors.decode(Arrays.copyOf(rawGu, guBytes), t), refGu, u, hidden * 0x1p-24, maxAbs(magGu));
        double[] refY = MoeReference.down(actd, wdd, ids, weights, n, topK, inter, hidden);
        double[] magY = MoeReference.down(abs(actd), abs(wdd), ids, weights, n, topK, inter, hidden);
        Stat sd = compare(
                HostTensors.decode(Arrays.copyOf(rawY, downBytes), t), refY, u, (inter + topK) * 0x1p-24, maxAbs(magY));
        long tg = poisonBroken(rawGu, guBytes, guard);
        long td = poisonBroken(rawY, downBytes, guard) + poisonBroken(rawPairs, 4L * pairs * hidden, guard);
        results.accept(Result.of("moe_gate_up" + suffix, t, name, new Stat(sg.maxAbs(), sg.maxRel(), sg.bad() + tg)));
        results.accept(Result.of("moe_down" + suffix, t, name, new Stat(sd.maxAbs(), sd.maxRel(), sd.bad() + td)));
    }

    static double[] abs(double[] v) {
        return Arrays.stream(v).map(Math::abs).toArray();
    }

    private static double[] fp32(byte[] raw) {
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        double[] d = new double[raw.length / 4];
        for (int i = 0; i < d.length; i++) {
            d[i] = b.getFloat();
        }
        return d;
    }
}
