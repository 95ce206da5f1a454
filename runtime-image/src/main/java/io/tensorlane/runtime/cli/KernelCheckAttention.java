package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.AttentionKernels;
import io.tensorlane.runtime.llm.AttentionPlan;
import io.tensorlane.runtime.llm.AttentionSlices;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.ModelReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s attention cases: a batch is laid out as the engine lays it out, planned by the engine's own
 * {@link AttentionPlan} (tensor-core tiles for prefill runs, split-key kernel for the rest), run through
 * {@link ModelKernels#attention}, and compared with the fp64 reference.
 */
final class KernelCheckAttention {
    /** How the case's tokens are ordered in the batch. */
    enum Layout {
        /** A 37-token prefill, a decode token at position 300 and a 1-token sequence, shuffled: every token to the split-key kernel. */
        SHUFFLED,
        /**
         * Prefill chunks in order, as the scheduler builds steps: a decode token at 300, a 200-token chunk from position 0 (tiles of
         * 64, 64, 64, 8 rows), a 10-token chunk at 5 (too short: split-key), a 70-token chunk continuing at 130 over cached keys
         * (64 + 6 rows) and a 1-token sequence.
         */
        PREFILL
    }

    /** A checked case's outcome and how the plan split it. */
    record Outcome(KernelCheckMath.Stat stat, int tiles, int rest) {}

    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;

    KernelCheckAttention(ModelKernels k, CUstream stream, SplittableRandom rnd, Runnable sync) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
    }

    /**
     * A case's batch as the engine lays it out: queries {@code q} [n, hq, hd] and a paged cache {@code kc}, {@code vc}
     * [slots, hk, hd] of T, where {@code used[slot]} marks the slots that hold a key of some sequence (every other slot
     * is NaN: a kernel reading a wrong slot produces NaN and fails).
     */
    record Batch(
            DType t,
            int hq,
            int hk,
            int hd,
            int n,
            int blockSize,
            int maxBlocksPerSeq,
            int[] tables,
            int[] tokenSeq,
            int[] tokenPos,
            byte[] q,
            byte[] kc,
            byte[] vc,
            boolean[] used,
            AttentionPlan plan) {
        /** Elements of one cache slot (hk x hd). */
        int row() {
            return hk * hd;
        }

        /** The fp64 reference over the caches' values {@code k}, {@code v} (as laid out in {@code kc}, {@code vc}). */
        double[] reference(double[] k, double[] v, double scale) {
            return ModelReference.attention(
                    HostTensors.decode(q, t),
                    k,
                    v,
                    tables,
                    tokenSeq,
                    tokenPos,
                    maxBlocksPerSeq,
                    blockSize,
                    n,
                    hq,
                    hk,
                    hd,
                    (float) scale);
        }
    }

    Outcome attention(DType t, int hq, int hk, int hd, double scale, Layout layout) {
        Batch b = batch(t, hq, hk, hd, layout);
        double[] got = run(b, b.kc(), b.vc(), null, scale);
        double[] ref = b.reference(HostTensors.decode(b.kc(), t), HostTensors.decode(b.vc(), t), scale);
        KernelCheckMath.Stat s =
                KernelCheckMath.compare(got, ref, HostTensors.unitRoundoff(t), KernelCheckCommand.KAPPA_ATTENTION, 1.0);
        return new Outcome(s, b.plan().numTiles(), b.plan().rest().length); // |v| <= 1
    }

    /**
     * The same batch with the slices merged by the combine kernel and by their last block ({@link
     * AttentionKernels#fusedCombine}), the fused one launched three times over the same workspace: the fused
     * output against the combine kernel's, which it must equal exactly.
     */
    KernelCheckMath.Stat fusedCombine(DType t, int hq, int hk, int hd, double scale, Layout layout) {
        Batch b = batch(t, hq, hk, hd, layout);
        boolean was = k.attentionKernels().fusedCombine();
        double[] kernel;
        double[] fused;
        try {
            k.attentionKernels().fusedCombine(false);
            kernel = run(b, b.kc(), b.vc(), null, scale);
            k.attentionKernels().fusedCombine(true);
            fused = run(b, b.kc(), b.vc(), null, scale, 3);
        } finally {
            k.attentionKernels().fusedCombine(was);
        }
        return KernelCheckMath.compare(fused, kernel, 0, 0, 1.0);
    }

    /** A fresh random batch of {@code layout} with a T cache ({@link Batch}). */
    Batch batch(DType t, int hq, int hk, int hd, Layout layout) {
        // {start position, tokens} per sequence, in batch order
        int[][] chunks = layout == Layout.SHUFFLED
                ? new int[][] {{0, 37}, {300, 1}, {0, 1}}
                : new int[][] {{300, 1}, {0, 200}, {5, 10}, {130, 70}, {0, 1}};
        return batch(t, hq, hk, hd, chunks, layout == Layout.SHUFFLED);
    }

    /**
     * A fresh random batch of the sequences {@code chunks} ({start position, tokens} each, in batch order; the keys
     * before the start already in the cache), its tokens shuffled or not, with a T cache ({@link Batch}).
     */
    Batch batch(DType t, int hq, int hk, int hd, int[][] chunks, boolean shuffle) {
        int blockSize = 16;
        int maxBlocksPerSeq = 20;
        int needed = 0;
        for (int[] c : chunks) {
            int blocks = (c[0] + c[1] + blockSize - 1) / blockSize;
            maxBlocksPerSeq = Math.max(maxBlocksPerSeq, blocks);
            needed += blocks;
        }
        int numBlocks = Math.max(64, needed);
        // Shuffled physical blocks: sequence s gets the next ceil(len/16) blocks of a random permutation.
        int[] perm = permutation(numBlocks);
        int[] tables = new int[chunks.length * maxBlocksPerSeq];
        Arrays.fill(tables, -1); // entries past a sequence's length must never be read
        int next = 0;
        for (int s = 0; s < chunks.length; s++) {
            int len = chunks[s][0] + chunks[s][1];
            for (int b = 0; b < (len + blockSize - 1) / blockSize; b++) {
                tables[s * maxBlocksPerSeq + b] = perm[next++];
            }
        }
        List<int[]> tokens = new ArrayList<>(); // {seq, pos}
        for (int s = 0; s < chunks.length; s++) {
            for (int p = chunks[s][0]; p < chunks[s][0] + chunks[s][1]; p++) {
                tokens.add(new int[] {s, p});
            }
        }
        if (shuffle) {
            java.util.Collections.shuffle(tokens, new java.util.Random(rnd.nextLong())); // mixed batch order
        }
        int n = tokens.size();
        int[] tokenSeq = tokens.stream().mapToInt(x -> x[0]).toArray();
        int[] tokenPos = tokens.stream().mapToInt(x -> x[1]).toArray();
        int numSlots = numBlocks * blockSize;
        int row = hk * hd;
        byte[] kc = HostTensors.random(t, (long) numSlots * row, rnd.nextLong());
        byte[] vc = HostTensors.random(t, (long) numSlots * row, rnd.nextLong());
        boolean[] used = new boolean[numSlots];
        for (int s = 0; s < chunks.length; s++) {
            for (int j = 0; j < chunks[s][0] + chunks[s][1]; j++) {
                used[ModelReference.slot(tables, maxBlocksPerSeq, blockSize, s, j)] = true;
            }
        }
        for (int sl = 0; sl < numSlots; sl++) {
            if (!used[sl]) {
                Arrays.fill(kc, sl * row * t.bytes(), (sl + 1) * row * t.bytes(), (byte) 0xFF);
                Arrays.fill(vc, sl * row * t.bytes(), (sl + 1) * row * t.bytes(), (byte) 0xFF);
            }
        }
        byte[] q = HostTensors.random(t, (long) n * hq * hd, rnd.nextLong());
        AttentionPlan plan = AttentionPlan.of(tokenSeq, tokenPos, n, hd);
        return new Batch(
                t, hq, hk, hd, n, blockSize, maxBlocksPerSeq, tables, tokenSeq, tokenPos, q, kc, vc, used, plan);
    }

    /**
     * The kernels' output for {@code b} over the caches {@code kc}, {@code vc}: T values ({@code kvScales} null) or e4m3
     * codes with the layer's {k_scale, v_scale}.
     */
    double[] run(Batch b, byte[] kc, byte[] vc, float[] kvScales, double scale) {
        return run(b, kc, vc, kvScales, scale, 1);
    }

    /**
     * {@link #run(Batch, byte[], byte[], float[], double)} launched {@code launches} times over the same buffers (the
     * output poisoned before each), the last output returned: the fused combine's counters must be back at zero after
     * each launch.
     */
    double[] run(Batch b, byte[] kc, byte[] vc, float[] kvScales, double scale, int launches) {
        DType t = b.t();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dQ = a.upload(b.q());
            long dK = a.upload(kc);
            long dV = a.upload(vc);
            long dT = a.upload(ints(b.tables()));
            long dSeq = a.upload(ints(b.tokenSeq()));
            long dPos = a.upload(ints(b.tokenPos()));
            long dTiles = a.upload(ints(b.plan().tiles()));
            long dRest = a.upload(ints(b.plan().rest()));
            long dScales = kvScales == null ? 0 : a.upload(KernelCheckMath.floats(kvScales));
            long outBytes = (long) b.n() * b.hq() * b.hd() * t.bytes();
            long dOut = a.poisoned(outBytes);
            long dWs = workspace(a, b);
            for (int l = 0; l < launches; l++) {
                Cuda.check(cuMemsetD8(new CUdeviceptr().withByteOffset(dOut), (byte) 0xFF, outBytes), "cuMemsetD8");
                launch(b, dQ, dK, dV, dT, dSeq, dPos, dOut, dWs, dTiles, dRest, dScales, scale);
            }
            sync.run();
            return HostTensors.decode(a.download(dOut, (int) outBytes), t);
        }
    }

    /**
     * {@code b}'s attention workspace in {@code a}, 0 where no launch splits: the slices poisoned, the fused combine's
     * counters zero (as the engine allocates them).
     */
    static long workspace(KernelCheckArena a, Batch b) {
        long wsBytes = AttentionSlices.workspaceBytes(b.hq(), b.hk(), b.hd());
        long dWs = wsBytes > 0 ? a.poisoned(wsBytes) : 0;
        if (dWs != 0) {
            Cuda.check(
                    cuMemsetD8(new CUdeviceptr().withByteOffset(dWs), (byte) 0, AttentionSlices.TICKETS_BYTES),
                    "cuMemsetD8");
        }
        return dWs;
    }

    /** {@link ModelKernels#attention} over {@code b}'s plan (its tiles and rest lists at {@code dTiles}, {@code dRest}). */
    void launch(
            Batch b,
            long dQ,
            long dK,
            long dV,
            long dT,
            long dSeq,
            long dPos,
            long dOut,
            long dWs,
            long dTiles,
            long dRest,
            long dScales,
            double scale) {
        DType t = b.t();
        k.attention(
                t,
                dQ,
                dK,
                dV,
                dT,
                dSeq,
                dPos,
                b.maxBlocksPerSeq(),
                b.blockSize(),
                dOut,
                dWs,
                dTiles,
                b.plan().numTiles(),
                dRest,
                b.plan().rest().length,
                b.n(),
                b.hq(),
                b.hk(),
                b.hd(),
                (float) scale,
                dScales,
                stream);
    }

    private int[] permutation(int n) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        for (int i = n - 1; i > 0; i--) {
            int j = rnd.nextInt(i + 1);
            int tmp = p[i];
            p[i] = p[j];
            p[j] = tmp;
        }
        return p;
    }
}
