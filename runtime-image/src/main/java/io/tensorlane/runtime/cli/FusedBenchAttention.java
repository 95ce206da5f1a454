package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.llm.AttentionKernels;
import io.tensorlane.runtime.llm.ModelKernels;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.SplittableRandom;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/** {@code bench-fused}'s attention rows: one decode token over a paged bf16 cache, both ways of merging key slices. */
record FusedBenchAttention(int hq, int hk, int hd, int context, int warmup, int iters) {
    /**
     * One decode token's attention at {@code --context} keys, its key slices merged by the combine kernel and by their
     * last block ({@link ModelKernels#fusedAttentionCombine}): the median of each, the same inputs, one launch timed
     * (split kernel and, for the kernel merge, the combine kernel).
     */
    void run(ModelKernels k, CUstream s, PrintWriter out) {
        int blockSize = 16;
        int blocks = (context + blockSize - 1) / blockSize;
        SplittableRandom rnd = new SplittableRandom(7);
        DType t = DType.bf16;
        boolean was = k.fusedAttentionCombine();
        try (KernelCheckArena a = new KernelCheckArena()) {
            long q = a.upload(KernelCheckMath.encode(t, doubles(hq * hd, rnd)));
            long kc = a.upload(KernelCheckMath.encode(t, doubles(blocks * blockSize * hk * hd, rnd)));
            long vc = a.upload(KernelCheckMath.encode(t, doubles(blocks * blockSize * hk * hd, rnd)));
            int[] table = new int[blocks];
            for (int i = 0; i < blocks; i++) {
                table[i] = blocks - 1 - i; // physical blocks in reverse: the paged walk, not a straight copy
            }
            long tables = a.upload(KernelCheckMath.ints(table));
            long seq = a.upload(KernelCheckMath.ints(new int[] {0}));
            long pos = a.upload(KernelCheckMath.ints(new int[] {context - 1}));
            long o = a.alloc((long) hq * hd * t.bytes());
            long wsBytes = AttentionKernels.workspaceBytes(hq, hk, hd);
            long ws = wsBytes > 0 ? a.alloc(wsBytes) : 0;
            if (ws != 0) {
                Cuda.check(cuMemsetD8(new CUdeviceptr().withByteOffset(ws), (byte) 0, wsBytes), "cuMemsetD8");
            }
            for (boolean fused : new boolean[] {false, true}) {
                k.fusedAttentionCombine(fused);
                double us = EventTimer.median(
                        s,
                        warmup,
                        iters,
                        () -> k.attention(
                                t,
                                q,
                                kc,
                                vc,
                                tables,
                                seq,
                                pos,
                                blocks,
                                blockSize,
                                o,
                                ws,
                                0,
                                0,
                                0,
                                0,
                                1,
                                hq,
                                hk,
                                hd,
                                (float) (1 / Math.sqrt(hd)),
                                0,
                                s));
                out.printf(
                        Locale.ROOT,
                        "attention   hq=%d,hk=%d,hd=%d,context=%d  %-7s %8.2f%n",
                        hq,
                        hk,
                        hd,
                        context,
                        fused ? "fused" : "kernel",
                        us);
            }
        } finally {
            k.fusedAttentionCombine(was);
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
