package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.llm.AttentionKernels;
import io.tensorlane.runtime.llm.AttentionSlices;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.ModelReference;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.SplittableRandom;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * {@code bench-fused}'s attention rows: one decode token over a paged bf16 cache, its rope + KV write by {@code
 * tl_qkv_rope} or folded into the attention, its key slices merged by the combine kernel or by their last block;
 * eager (a launch from the host each, its cost included) and replayed from a graph of {@link #GRAPH_REPS} tokens.
 */
record FusedBenchAttention(int hq, int hk, int hd, int context, int warmup, int iters) {
    /** Tokens a timed graph holds (the same inputs each: the cache stays in L2, so these are the kernels' floor). */
    static final int GRAPH_REPS = 8;

    /**
     * One decode token's rope, KV write and attention at {@code --context} keys, each of the four ways ({@link
     * AttentionKernels#fusedRope}, {@link AttentionKernels#fusedCombine}): the median of each, the same inputs, every
     * kernel of the token's attention in one timing (with PDL, as a step launches them).
     */
    void run(ModelKernels k, CUstream s, PrintWriter out) {
        int blockSize = 16;
        int blocks = (context + blockSize - 1) / blockSize;
        SplittableRandom rnd = new SplittableRandom(7);
        DType t = DType.bf16;
        AttentionKernels ak = k.attentionKernels();
        boolean was = ak.fusedCombine();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long qkv = a.upload(KernelCheckMath.encode(t, doubles((hq + 2 * hk) * hd, rnd)));
            long q = a.alloc((long) hq * hd * t.bytes());
            long kc = a.upload(KernelCheckMath.encode(t, doubles(blocks * blockSize * hk * hd, rnd)));
            long vc = a.upload(KernelCheckMath.encode(t, doubles(blocks * blockSize * hk * hd, rnd)));
            int[] table = new int[blocks];
            for (int i = 0; i < blocks; i++) {
                table[i] = blocks - 1 - i; // physical blocks in reverse: the paged walk, not a straight copy
            }
            long tables = a.upload(KernelCheckMath.ints(table));
            long seq = a.upload(KernelCheckMath.ints(new int[] {0}));
            int p = context - 1;
            long pos = a.upload(KernelCheckMath.ints(new int[] {p}));
            long slots = a.upload(KernelCheckMath.ints(new int[] {table[p / blockSize] * blockSize + p % blockSize}));
            float[][] rope = ModelReference.ropeTables(context, hd, 500000.0); // Llama 3's base
            long cos = a.upload(KernelCheckMath.floats(rope[0]));
            long sin = a.upload(KernelCheckMath.floats(rope[1]));
            AttentionKernels.Rope r = new AttentionKernels.Rope(qkv, 0, 0, 0, 1e-6f, cos, sin, slots);
            long o = a.alloc((long) hq * hd * t.bytes());
            long wsBytes = AttentionSlices.workspaceBytes(hq, hk, hd);
            long ws = wsBytes > 0 ? a.alloc(wsBytes) : 0;
            if (ws != 0) {
                Cuda.check(cuMemsetD8(new CUdeviceptr().withByteOffset(ws), (byte) 0, wsBytes), "cuMemsetD8");
            }
            float scale = (float) (1 / Math.sqrt(hd));
            for (boolean fusedRope : new boolean[] {false, true}) {
                for (boolean fused : new boolean[] {false, true}) {
                    ak.fusedCombine(fused);
                    Runnable token = fusedRope
                            ? () -> ak.launchWithRope(
                                    t, r, kc, vc, tables, seq, pos, blocks, blockSize, o, ws, 1, hq, hk, hd, scale, 0,
                                    s)
                            : () -> {
                                k.qkvRope(t, qkv, 0, 0, 0, 1e-6f, cos, sin, pos, slots, q, kc, vc, 1, hq, hk, hd, 0, s);
                                k.attention(
                                        t, q, kc, vc, tables, seq, pos, blocks, blockSize, o, ws, 0, 0, 0, 0, 1, hq, hk,
                                        hd, scale, 0, s);
                            };
                    double us = EventTimer.median(s, warmup, iters, token);
                    double graph = EventTimer.graphMedian(s, warmup, iters, GRAPH_REPS, token);
                    out.printf(
                            Locale.ROOT,
                            "attention   hq=%d,hk=%d,hd=%d,context=%d  rope=%-6s merge=%-6s %8.2f | graph %8.2f%n",
                            hq,
                            hk,
                            hd,
                            context,
                            fusedRope ? "fused" : "kernel",
                            fused ? "fused" : "kernel",
                            us,
                            graph);
                }
            }
        } finally {
            ak.fusedCombine(was);
        }
        out.flush();
    }

    private static double[] doubles(int n, SplittableRandom rnd) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = rnd.nextDouble() * 2 - 1;
        }
        return v;
    }
}
