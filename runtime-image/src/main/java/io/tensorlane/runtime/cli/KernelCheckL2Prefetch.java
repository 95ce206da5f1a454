package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.llm.L2Prefetch;
import io.tensorlane.runtime.llm.ModelKernels;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of tl_l2_prefetch ({@link io.tensorlane.runtime.llm.L2PrefetchKernel}), once a run:
 * spans of one 16-byte piece, of partial 16 KiB pieces and longer than one pass of the grid, four at once. A prefetch
 * computes nothing, so each case checks that it faults nowhere and changes no byte of its spans, and that a GEMV
 * reading a prefetched weight gives the same bits as one reading it cold. The {@code timed} case also says what the
 * prefetch is for: the GEMV's time on a weight read cold (L2 flushed by a 256 MiB memset) and on the same weight just
 * prefetched (median of 9 each, CUDA events), printed in its name; the times are information, not the verdict.
 */
final class KernelCheckL2Prefetch {
    private static final long FLUSH_BYTES = 256L << 20;

    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final Consumer<Result> results;

    KernelCheckL2Prefetch(
            ModelKernels k, CUstream stream, SplittableRandom rnd, Runnable sync, Consumer<Result> results) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.results = results;
    }

    /** The cases, each run by {@code guard}. */
    void all(KernelCheckFp8.Guard guard) {
        long[][] spans = {
            {16}, {16 << 10}, {(16 << 10) + 48}, {3 << 20, 16, (5 << 20) + 4080, 1 << 20}, {(96L << 20) + 16}
        };
        for (long[] s : spans) {
            String nm = "bytes=" + Arrays.toString(s).replace(" ", "");
            guard.run("l2_prefetch", DType.bf16, nm, () -> untouched(nm, s));
        }
        guard.run("l2_prefetch", DType.bf16, "timed", this::timed);
    }

    /** Spans of {@code lengths} bytes, random contents: each reads back unchanged after the prefetch. */
    private void untouched(String nm, long[] lengths) {
        try (KernelCheckArena a = new KernelCheckArena()) {
            long[] addr = new long[lengths.length];
            byte[][] data = new byte[lengths.length][];
            List<L2Prefetch.Span> spans = new ArrayList<>();
            for (int i = 0; i < lengths.length; i++) {
                data[i] = new byte[(int) lengths[i]];
                rnd.nextBytes(data[i]);
                addr[i] = a.upload(data[i]);
                spans.add(new L2Prefetch.Span(addr[i], lengths[i]));
            }
            k.prefetch().launch(spans, stream);
            sync.run();
            long bad = 0;
            for (int i = 0; i < lengths.length; i++) {
                if (!Arrays.equals(data[i], a.download(addr[i], data[i].length))) {
                    bad++;
                }
            }
            results.accept(Result.of("l2_prefetch", DType.bf16, nm, new KernelCheckMath.Stat(0, 0, bad)));
        }
    }

    /** A 4096 x 2048 bf16 GEMV (16 MiB of weight) cold and prefetched: the same bits, and both times. */
    private void timed() throws Exception {
        int in = 2048;
        int out = 4096;
        long wBytes = 2L * in * out;
        try (KernelCheckArena a = new KernelCheckArena()) {
            byte[] w = random(in * out);
            long dw = a.upload(w);
            long dx = a.upload(random(in));
            long dy = a.poisoned(2L * out);
            long flush = a.alloc(FLUSH_BYTES);
            List<L2Prefetch.Span> spans = List.of(new L2Prefetch.Span(dw, wBytes));
            CUevent e0 = new CUevent();
            CUevent e1 = new CUevent();
            Cuda.check(cuEventCreate(e0, 0), "cuEventCreate");
            Cuda.check(cuEventCreate(e1, 0), "cuEventCreate");
            try {
                float[] cold = new float[9];
                float[] warm = new float[9];
                byte[] yCold = null;
                long bad = 0;
                for (int r = 0; r < cold.length; r++) {
                    for (boolean pre : new boolean[] {false, true}) {
                        flush(flush);
                        if (pre) {
                            k.prefetch().launch(spans, stream);
                            sync.run();
                            Thread.sleep(1); // the bulk prefetches land after the kernel ends
                        }
                        Cuda.check(cuEventRecord(e0, stream), "cuEventRecord");
                        k.gemv(DType.bf16, dx, dw, dy, in, out, stream);
                        Cuda.check(cuEventRecord(e1, stream), "cuEventRecord");
                        Cuda.check(cuEventSynchronize(e1), "cuEventSynchronize");
                        float[] ms = {0};
                        Cuda.check(cuEventElapsedTime(ms, e0, e1), "cuEventElapsedTime");
                        (pre ? warm : cold)[r] = ms[0];
                        byte[] y = a.download(dy, 2 * out);
                        if (yCold == null) {
                            yCold = y;
                        } else if (!Arrays.equals(yCold, y)) {
                            bad++;
                        }
                    }
                }
                if (!Arrays.equals(w, a.download(dw, w.length))) {
                    bad++;
                }
                double c = median(cold) * 1e3;
                double p = median(warm) * 1e3;
                String nm = String.format(
                        Locale.ROOT, "timed,16MiB gemv cold %.2f us,prefetched %.2f us (%.2fx)", c, p, c / p);
                results.accept(Result.of("l2_prefetch", DType.bf16, nm, new KernelCheckMath.Stat(0, 0, bad)));
            } finally {
                cuEventDestroy(e0);
                cuEventDestroy(e1);
            }
        }
    }

    /** Writes {@link #FLUSH_BYTES} (over any GPU's L2), so that the weight is read from DRAM after it. */
    private void flush(long address) {
        Cuda.check(
                cuMemsetD8Async(new CUdeviceptr().withByteOffset(address), (byte) 1, FLUSH_BYTES, stream),
                "cuMemsetD8Async(flush)");
    }

    private byte[] random(int n) {
        double[] v = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = rnd.nextDouble(-1, 1);
        }
        return KernelCheckMath.encode(DType.bf16, v);
    }

    private static double median(float[] v) {
        float[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
