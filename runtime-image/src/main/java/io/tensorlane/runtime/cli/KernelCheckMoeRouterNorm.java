package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.MoeDecodeKernels;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s {@code moe_router_norm} cases: tl_moe_router_norm ({@link MoeDecodeKernels#routerNorm}, a folded
 * one-token step's RMSNorm and router in one kernel) against the two kernels it replaces, tl_add_rmsnorm in mode 2 and
 * tl_moe_router, on the same residual row. The normed row, the expert ids and the weights must equal theirs bit for
 * bit, the ids k distinct experts; the residual must come back untouched, the guard bytes after each output unhit, and
 * the counter zero after two launches. The two kernels are checked against host references by {@code add_rmsnorm} and {@code moe_router}.
 */
final class KernelCheckMoeRouterNorm {
    private static final int GUARD = 64;

    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final Consumer<Result> results;

    KernelCheckMoeRouterNorm(
            ModelKernels k, CUstream stream, SplittableRandom rnd, Runnable sync, Consumer<Result> results) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.results = results;
    }

    void all(DType t, KernelCheckFp8.Guard guard) {
        // {experts, top-k, hidden}: Qwen3-30B-A3B's router (128, 8, 2048), Mixtral's (8, 2, 4096), the most experts
        // (512), the widest staged row (8192, past the norm's registers at 512 threads x 16), a width no multiple of 8
        // (351: the scalar dot), 3 experts in one block
        int[][] shapes = {{128, 8, 2048}, {8, 2, 4096}, {512, 8, 256}, {16, 4, 8192}, {60, 4, 351}, {3, 3, 64}};
        for (int[] sh : shapes) {
            for (boolean norm : new boolean[] {false, true}) {
                String nm = "E=" + sh[0] + ",k=" + sh[1] + ",hidden=" + sh[2] + ",norm=" + norm;
                guard.run("moe_router_norm", t, nm, () -> check(t, sh[0], sh[1], sh[2], norm, nm));
            }
        }
    }

    void check(DType t, int experts, int topK, int hidden, boolean norm, String name) {
        float[] r = new float[hidden];
        for (int j = 0; j < hidden; j++) {
            r[j] = (float) ((rnd.nextDouble() * 2 - 1) * 3);
        }
        double[] gamma = new double[hidden];
        for (int j = 0; j < hidden; j++) {
            gamma[j] = 0.5 + rnd.nextDouble();
        }
        double[] w = new double[experts * hidden];
        for (int i = 0; i < w.length; i++) {
            w[i] = (rnd.nextDouble() * 2 - 1) * 0.1;
        }
        float eps = 1e-6f;
        int rowBytes = hidden * t.bytes();
        int pairBytes = 4 * topK;
        byte[] rBytes = floats(r);
        MoeDecodeKernels d = k.moe().decode();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dR = a.upload(rBytes);
            long dGamma = a.upload(encode(t, gamma));
            long dW = a.upload(encode(t, w));
            long dCounter = a.upload(ints(new int[] {0}));
            long dLogits = a.poisoned(4L * experts);
            long[] dXn = {a.poisoned(rowBytes + GUARD), a.poisoned(rowBytes + GUARD), a.poisoned(rowBytes + GUARD)};
            long[] dIds = {a.poisoned(pairBytes + GUARD), a.poisoned(pairBytes + GUARD), a.poisoned(pairBytes + GUARD)};
            long[] dWts = {a.poisoned(pairBytes + GUARD), a.poisoned(pairBytes + GUARD), a.poisoned(pairBytes + GUARD)};
            k.addRmsNorm(t, dR, 0, dGamma, dXn[0], 1, hidden, eps, 2, stream);
            d.router(t, dXn[0], dW, dLogits, dCounter, 1, hidden, experts, topK, norm, dIds[0], dWts[0], stream);
            for (int run = 1; run <= 2; run++) { // the second launch finds the counter the first left
                d.routerNorm(
                        t, dR, dGamma, eps, dXn[run], dW, dLogits, dCounter, hidden, experts, topK, norm, dIds[run],
                        dWts[run], stream);
            }
            sync.run();
            long bad = toInts(a.download(dCounter, 4))[0] != 0 ? 1 : 0;
            bad += Arrays.equals(a.download(dR, rBytes.length), rBytes) ? 0 : 1;
            byte[][] xn = new byte[3][];
            byte[][] ids = new byte[3][];
            byte[][] wts = new byte[3][];
            for (int i = 0; i < 3; i++) {
                xn[i] = a.download(dXn[i], rowBytes + GUARD);
                ids[i] = a.download(dIds[i], pairBytes + GUARD);
                wts[i] = a.download(dWts[i], pairBytes + GUARD);
                bad += poisonBroken(xn[i], rowBytes, GUARD)
                        + poisonBroken(ids[i], pairBytes, GUARD)
                        + poisonBroken(wts[i], pairBytes, GUARD);
            }
            int[] chosen = toInts(Arrays.copyOf(ids[1], pairBytes)); // k distinct experts (not a poisoned row)
            bad += Arrays.stream(chosen).filter(e -> e < 0 || e >= experts).count()
                    + (topK - Arrays.stream(chosen).distinct().count());
            for (int run = 1; run <= 2; run++) {
                bad += differing(xn[0], xn[run], rowBytes, t.bytes())
                        + differing(ids[0], ids[run], pairBytes, 4)
                        + differing(wts[0], wts[run], pairBytes, 4);
            }
            results.accept(Result.of("moe_router_norm", t, name, new Stat(0, 0, bad)));
        }
    }

    /** Elements of {@code size} bytes among the first {@code bytes} of {@code a} and {@code b} that differ. */
    private static long differing(byte[] a, byte[] b, int bytes, int size) {
        long n = 0;
        for (int at = 0; at < bytes; at += size) {
            if (!Arrays.equals(a, at, at + size, b, at, at + size)) {
                n++;
            }
        }
        return n;
    }
}
