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
import io.tensorlane.runtime.llm.MoeDecodeKernels;
import io.tensorlane.runtime.llm.MoeReference;
import io.tensorlane.runtime.model.Fp8;
import io.tensorlane.runtime.model.WeightType;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the fused MoE decode kernels ({@link MoeDecodeKernels}, tl_moe_fused.cuh) against
 * {@link MoeReference}: the router GEMV + top-k ({@code moe_router}: x and w on grids whose every partial sum is exact
 * in fp32, so the logits are exact and the ties (duplicated router rows) reach the top-k as the reference sees them;
 * ids exact, weights to fp32 rounding; a token of NaN still gets k distinct experts; launched twice on one counter,
 * which must come back zero), gate/up with silu ({@code moe_gate_up_silu}) and down with the weighted sum ({@code
 * moe_down_sum}, launched twice: the two outputs must be bit-identical), over the model's dtype and FP8 experts (block,
 * block-row and row scales), widths that are and are not multiples of 8, 16 and 128, top-k up to 8, 128 experts.
 */
final class KernelCheckMoeFused {
    private final MoeDecodeKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;
    private final KernelCheckFp8 fp8;

    KernelCheckMoeFused(
            MoeDecodeKernels k,
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

    void all(DType t, KernelCheckFp8.Guard guard) {
        // {n, experts, top-k, hidden}: Qwen3-30B-A3B's router (128 experts, top-8, hidden 2048) at 1 and 8 tokens, 512
        // experts (the most), widths of a remainder chunk (520), no multiple of 8 (351: the scalar path), 3 experts per
        // block of 8 warps (E = 3)
        int[][] routers = {
            {1, 128, 8, 2048},
            {8, 128, 8, 2048},
            {3, 16, 2, 520},
            {5, 512, 8, 256},
            {2, 60, 4, 351},
            {4, 3, 3, 64},
            {7, 8, 1, 128}
        };
        for (int[] r : routers) {
            for (boolean norm : new boolean[] {false, true}) {
                String nm = "n=" + r[0] + ",E=" + r[1] + ",k=" + r[2] + ",hidden=" + r[3] + ",norm=" + norm;
                guard.run("moe_router", t, nm, () -> routerCase(t, r[0], r[1], r[2], r[3], norm, false, nm));
            }
        }
        guard.run("moe_router", t, "nan-token", () -> routerCase(t, 4, 16, 4, 512, true, true, "nan-token"));
        // {n, experts, top-k, hidden, inter}: one token of Qwen3-30B-A3B's widths (hidden 2048, inter 768; 16 experts
        // to keep the host's tables small), 8 tokens over 128 experts, widths that are no multiple of 128 (448, 96) or
        // of 8 (351: Mixtral's 702 / 2, as inter (down's scalar path) and as hidden (gate/up's))
        int[][] shapes = {
            {1, 16, 8, 2048, 768},
            {8, 128, 8, 256, 128},
            {5, 8, 2, 512, 256},
            {3, 8, 2, 448, 351},
            {2, 4, 2, 448, 96},
            {2, 4, 2, 351, 64}
        };
        for (int[] sh : shapes) {
            String nm = "n=" + sh[0] + ",E=" + sh[1] + ",k=" + sh[2] + ",hidden=" + sh[3] + ",inter=" + sh[4];
            guard.run("moe_fused", t, nm, () -> expertCase(t, WeightType.DENSE, sh[0], sh[1], sh[2], sh[3], sh[4], nm));
        }
        // FP8: whole and partial 128-column blocks (448 = 3.5, 96), rows not of 16-byte chunks (200, 72: the scalar
        // path; not for the compact block grid, which needs each expert on a block row)
        int[][] fp8Shapes = {
            {1, 16, 8, 2048, 384}, {8, 128, 8, 256, 128}, {5, 8, 2, 512, 256}, {2, 4, 2, 448, 96}, {3, 8, 2, 200, 72}
        };
        for (WeightType type : WeightType.values()) {
            if (!type.fp8()) {
                continue;
            }
            String ty = type.name().toLowerCase(Locale.ROOT);
            for (int[] sh : fp8Shapes) {
                if (type == WeightType.FP8_BLOCK
                        && (2 * sh[4] % WeightType.BLOCK != 0 || sh[3] % WeightType.BLOCK != 0)) {
                    continue;
                }
                String nm = ty + ",n=" + sh[0] + ",E=" + sh[1] + ",k=" + sh[2] + ",hidden=" + sh[3] + ",inter=" + sh[4];
                guard.run("moe_fused_fp8", t, nm, () -> expertCase(t, type, sh[0], sh[1], sh[2], sh[3], sh[4], nm));
            }
        }
    }

    /**
     * x on a 1/4 grid in [-1/2, 1/2], w on a 1/8 grid in [-1/4, 1/4]: every product is a multiple of 2^-5 and every
     * partial sum below 2^19 of them, so each logit is exact in fp32 whatever the order. Rows 1 and 2 equal row 0 (and
     * the last row equals row 0 when E > 4): exact ties, to the lower index. {@code nanToken}: the last token's x[0] is
     * NaN, so its every logit is NaN.
     */
    void routerCase(DType t, int n, int experts, int topK, int hidden, boolean norm, boolean nanToken, String name) {
        double[] x = new double[n * hidden];
        for (int i = 0; i < x.length; i++) {
            x[i] = (rnd.nextInt(5) - 2) / 4.0;
        }
        double[] w = new double[experts * hidden];
        for (int i = 0; i < w.length; i++) {
            w[i] = (rnd.nextInt(5) - 2) / 8.0;
        }
        for (int copy : experts > 4 ? new int[] {1, 2, experts - 1} : new int[] {1}) {
            if (copy < experts) {
                System.arraycopy(w, 0, w, copy * hidden, hidden);
            }
        }
        byte[] xb = encode(t, x);
        if (nanToken) {
            int at = (n - 1) * hidden * t.bytes();
            short nan = t == DType.bf16 ? (short) 0x7FC0 : (short) 0x7E00;
            xb[at] = (byte) nan;
            xb[at + 1] = (byte) (nan >> 8);
        }
        int pairs = n * topK;
        int guard = 64;
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(xb);
            long dW = a.upload(encode(t, w));
            long dLogits = a.poisoned(4L * n * experts);
            long dCounter = a.upload(ints(new int[] {0}));
            long[] dIds = {a.poisoned(4L * pairs + guard), a.poisoned(4L * pairs + guard)};
            long[] dWts = {a.poisoned(4L * pairs + guard), a.poisoned(4L * pairs + guard)};
            for (int run = 0; run < 2; run++) { // the second launch finds the counter the first left
                k.router(t, dX, dW, dLogits, dCounter, n, hidden, experts, topK, norm, dIds[run], dWts[run], stream);
            }
            sync.run();
            int checked = nanToken ? n - 1 : n;
            double[] logits = new double[checked * experts];
            for (int tok = 0; tok < checked; tok++) {
                for (int e = 0; e < experts; e++) {
                    double acc = 0;
                    for (int c = 0; c < hidden; c++) {
                        acc += x[tok * hidden + c] * w[e * hidden + c];
                    }
                    logits[tok * experts + e] = acc;
                }
            }
            MoeReference.Routing ref = MoeReference.route(logits, checked, experts, topK, norm);
            long bad = toInts(a.download(dCounter, 4))[0] != 0 ? 1 : 0;
            double maxAbs = 0;
            double maxRel = 0;
            for (int run = 0; run < 2; run++) {
                byte[] rawIds = a.download(dIds[run], 4 * pairs + guard);
                byte[] rawW = a.download(dWts[run], 4 * pairs + guard);
                int[] ids = toInts(Arrays.copyOf(rawIds, 4 * pairs));
                double[] wt = HostTensors.decode(Arrays.copyOf(rawW, 4 * pairs), DType.fp32);
                bad += poisonBroken(rawIds, 4L * pairs, guard) + poisonBroken(rawW, 4L * pairs, guard);
                for (int i = 0; i < checked * topK; i++) {
                    if (ids[i] != ref.ids()[i]) {
                        bad++;
                    }
                }
                if (nanToken) {
                    Set<Integer> seen = new HashSet<>();
                    for (int s = 0; s < topK; s++) {
                        int id = ids[(n - 1) * topK + s];
                        if (id < 0 || id >= experts || !seen.add(id)) {
                            bad++;
                        }
                    }
                }
                Stat sw = compare(Arrays.copyOf(wt, checked * topK), ref.weights(), 0x1p-20, 0, maxAbs(ref.weights()));
                bad += sw.bad();
                maxAbs = Math.max(maxAbs, sw.maxAbs());
                maxRel = Math.max(maxRel, sw.maxRel());
            }
            if (bad > 0) {
                out.println(
                        "  moe_router " + name + ": " + bad + " ids/weights differ, guard bytes hit or counter not 0");
            }
            results.accept(Result.of("moe_router", t, name, new Stat(maxAbs, maxRel, bad)));
        }
    }

    /**
     * gate/up + silu and down + weighted sum of random experts (ids with repeats, the last expert read; FP8: random e4m3
     * codes and scales in {@code type}'s layout, compared on the dequantized weights) against double.
     */
    void expertCase(DType t, WeightType type, int n, int experts, int topK, int hidden, int inter, String name) {
        int pairs = n * topK;
        int[] ids = new int[pairs];
        float[] wf = new float[pairs];
        double[] weights = new double[pairs];
        for (int p = 0; p < pairs; p++) {
            ids[p] = rnd.nextInt(experts);
            wf[p] = (float) rnd.nextDouble();
            weights[p] = wf[p];
        }
        ids[0] = experts - 1;
        if (pairs > 1) {
            ids[pairs - 1] = ids[0];
        }
        int gu = 2 * inter;
        boolean q = type.fp8();
        byte[] x = encode(t, uniform(n * hidden));
        byte[] act = encode(t, uniform(pairs * inter));
        byte[] wgu = q ? fp8.codes(experts * gu * hidden) : encode(t, uniform(experts * gu * hidden));
        byte[] wd = q ? fp8.codes(experts * hidden * inter) : encode(t, uniform(experts * hidden * inter));
        float[] sgu = q ? fp8.scales(type, experts * gu, hidden) : new float[1];
        float[] sd = q ? fp8.scales(type, experts * hidden, inter) : new float[1];
        int guard = 64;
        int actBytes = pairs * inter * t.bytes();
        int yBytes = n * hidden * t.bytes();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dAct = a.upload(act);
            long dWgu = a.upload(wgu);
            long dWd = a.upload(wd);
            long dSgu = a.upload(floats(sgu));
            long dSd = a.upload(floats(sd));
            long dIds = a.upload(ints(ids));
            long dWts = a.upload(floats(wf));
            long dActOut = a.poisoned(actBytes + guard);
            long[] dY = {a.poisoned(yBytes + guard), a.poisoned(yBytes + guard)};
            float[] r0 = new float[n * hidden]; // the residual stream tl_moe_down_sum_res adds to, and a guard
            for (int i = 0; i < r0.length; i++) {
                r0[i] = (float) (4 * rnd.nextDouble() - 2);
            }
            float[] rGuarded = Arrays.copyOf(r0, r0.length + guard / 4);
            Arrays.fill(rGuarded, r0.length, rGuarded.length, Float.NaN);
            long dR = a.upload(floats(rGuarded));
            if (q) {
                k.gateUpSiluFp8(t, type, dX, dWgu, dSgu, dActOut, dIds, n, topK, hidden, inter, stream);
            } else {
                k.gateUpSilu(t, dX, dWgu, dActOut, dIds, n, topK, hidden, inter, stream);
            }
            for (long y : new long[] {dY[0], dY[1], dR}) {
                boolean res = y == dR;
                if (q) {
                    k.downSumFp8(t, type, dAct, dWd, dSd, y, res, dIds, dWts, n, topK, inter, hidden, stream);
                } else {
                    k.downSum(t, dAct, dWd, y, res, dIds, dWts, n, topK, inter, hidden, stream);
                }
            }
            sync.run();
            double[] xd = HostTensors.decode(x, t);
            double[] actd = HostTensors.decode(act, t);
            double[] wgud = q ? Fp8.dequantize(wgu, sgu, type, experts * gu, hidden) : HostTensors.decode(wgu, t);
            double[] wdd = q ? Fp8.dequantize(wd, sd, type, experts * hidden, inter) : HostTensors.decode(wd, t);
            byte[] rawAct = a.download(dActOut, actBytes + guard);
            String suffix = q ? "_fp8" : "";
            judgeAct(t, suffix, name, xd, wgud, ids, n, topK, hidden, inter, rawAct, guard);
            byte[] y0 = a.download(dY[0], yBytes + guard);
            byte[] y1 = a.download(dY[1], yBytes + guard);
            double u = HostTensors.unitRoundoff(t);
            double[] refY = MoeReference.down(actd, wdd, ids, weights, n, topK, inter, hidden);
            double[] magY = MoeReference.down(
                    KernelCheckMoe.abs(actd), KernelCheckMoe.abs(wdd), ids, weights, n, topK, inter, hidden);
            Stat sd2 = compare(
                    HostTensors.decode(Arrays.copyOf(y0, yBytes), t), refY, u, (inter + topK) * 0x1p-24, maxAbs(magY));
            long differ = Arrays.equals(y0, 0, yBytes, y1, 0, yBytes) ? 0 : 1;
            if (differ > 0) {
                out.println("  moe_down_sum" + suffix + " " + name + ": two launches gave different outputs");
            }
            long touched = poisonBroken(y0, yBytes, guard) + poisonBroken(y1, yBytes, guard);
            results.accept(Result.of(
                    "moe_down_sum" + suffix,
                    t,
                    name,
                    new Stat(sd2.maxAbs(), sd2.maxRel(), sd2.bad() + touched + differ)));
            results.accept(Result.of(
                    "moe_down_sum_res" + suffix,
                    t,
                    name,
                    residualAdded(a.download(dR, 4 * rGuarded.length), r0, y0, t)));
        }
    }

    /**
     * The residual stream after tl_moe_down_sum_res ({@code raw}, fp32 and a NaN guard) against {@code r0[i] +
     * float(y[i])} in fp32, y being tl_moe_down_sum's T output of the same inputs: exact (tl_add_rmsnorm's mode-1 add),
     * the guard untouched.
     */
    private static Stat residualAdded(byte[] raw, float[] r0, byte[] y, DType t) {
        java.nio.FloatBuffer got = java.nio.ByteBuffer.wrap(raw)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .asFloatBuffer();
        double[] yd = HostTensors.decode(Arrays.copyOf(y, r0.length * t.bytes()), t);
        double maxAbs = 0;
        long bad = 0;
        for (int i = 0; i < r0.length; i++) {
            float want = r0[i] + (float) yd[i];
            float g = got.get(i);
            maxAbs = Math.max(maxAbs, Math.abs((double) g - want));
            bad += Float.floatToRawIntBits(g) == Float.floatToRawIntBits(want) ? 0 : 1;
        }
        for (int i = r0.length; i < got.limit(); i++) {
            bad += Float.isNaN(got.get(i)) ? 0 : 1;
        }
        return new Stat(maxAbs, maxAbs, bad);
    }

    /**
     * act = silu(T(g)) * T(u) against double g, u: bad where the error exceeds what T's rounding of g and u and the
     * fp32 accumulation can make, propagated through silu (|silu'| < 1.1), plus act's own rounding.
     */
    private void judgeAct(
            DType t,
            String suffix,
            String name,
            double[] xd,
            double[] wgud,
            int[] ids,
            int n,
            int topK,
            int hidden,
            int inter,
            byte[] rawAct,
            int guard) {
        int pairs = n * topK;
        int actBytes = pairs * inter * t.bytes();
        double u = HostTensors.unitRoundoff(t);
        double[] gu = MoeReference.gateUp(xd, wgud, ids, n, topK, hidden, 2 * inter);
        double[] mag =
                MoeReference.gateUp(KernelCheckMoe.abs(xd), KernelCheckMoe.abs(wgud), ids, n, topK, hidden, 2 * inter);
        double[] got = HostTensors.decode(Arrays.copyOf(rawAct, actBytes), t);
        double[] ref = new double[pairs * inter];
        long bad = poisonBroken(rawAct, actBytes, guard);
        double maxAbs = 0;
        double maxRel = 0;
        for (int p = 0; p < pairs; p++) {
            for (int j = 0; j < inter; j++) {
                int gi = p * 2 * inter + j;
                int ui = gi + inter;
                double g = gu[gi];
                double up = gu[ui];
                double silu = g / (1 + Math.exp(-g));
                double r = silu * up;
                ref[p * inter + j] = r;
                double eg = 2 * u * Math.abs(g) + hidden * 0x1p-24 * mag[gi] * 2;
                double eu = 2 * u * Math.abs(up) + hidden * 0x1p-24 * mag[ui] * 2;
                double tol = 1.1 * Math.abs(up) * eg + (Math.abs(silu) + 1.1 * eg) * eu + 2 * u * Math.abs(r) + 1e-30;
                double d = Math.abs(got[p * inter + j] - r);
                maxAbs = Math.max(maxAbs, d);
                maxRel = Math.max(maxRel, d / Math.max(Math.abs(r), 1e-3));
                if (!(d <= tol)) {
                    bad++;
                }
            }
        }
        results.accept(Result.of("moe_gate_up_silu" + suffix, t, name, new Stat(maxAbs, maxRel, bad)));
    }

    private double[] uniform(int count) {
        double[] v = new double[count];
        for (int i = 0; i < count; i++) {
            v[i] = rnd.nextDouble() * 2 - 1;
        }
        return v;
    }
}
