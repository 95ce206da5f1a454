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
 * prefetch is for: the GEMV's time on a weight read cold (L2 flushed by a 256 MiB memset) and on the same weight
 * prefetched during a stretch of small kernels (median of 9 each, CUDA events), printed in its name; the times are
 * information, not the verdict. (Its first version timed the prefetched GEMV after a host synchronize, most likely
 * with the JCuda launch gap, ~16 us, inside that timing: H100, 2026-12-07, 11.78 against 27.81 us.)
 */
final class KernelCheckL2Prefetch {
    /** Written before each timed run: over any GPU's L2, so that the weight is read from DRAM after it. */
    private static final long FLUSH_BYTES = 256L << 20;
    /** The timed runs' stand-in for a latency-bound stretch: this many memsets of {@link #GAP_BYTES}. */
    private static final int GAP_KERNELS = 32;

    private static final long GAP_BYTES = 64 << 10;

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

    /**
     * A 4096 x 2048 bf16 GEMV (16 MiB of weight) cold and prefetched: the same bits, and the times. Each run: the L2
     * flushed, the prefetch (or not), {@link #GAP_KERNELS} memsets of 64 KiB (a stand-in for the attention: the stream
     * busy, DRAM idle, L2 barely touched; the host enqueues ahead of the GPU, so no launch gap is timed), the GEMV.
     * Timed with CUDA events: the GEMV alone, and the window from the prefetch (or where it would be) to the GEMV's end.
     */
    private void timed() {
        int in = 2048;
        int out = 4096;
        long wBytes = 2L * in * out;
        try (KernelCheckArena a = new KernelCheckArena()) {
            byte[] w = random(in * out);
            long dw = a.upload(w);
            long dx = a.upload(random(in));
            long dy = a.poisoned(2L * out);
            long flush = a.alloc(FLUSH_BYTES);
            long gap = a.alloc(GAP_BYTES);
            List<L2Prefetch.Span> spans = List.of(new L2Prefetch.Span(dw, wBytes));
            CUevent[] e = {new CUevent(), new CUevent(), new CUevent()};
            for (CUevent x : e) {
                Cuda.check(cuEventCreate(x, 0), "cuEventCreate");
            }
            try {
                int reps = 9;
                float[][] gemv = new float[2][reps];
                float[][] window = new float[2][reps];
                byte[] yFirst = null;
                long bad = 0;
                for (int r = 0; r < reps; r++) {
                    for (int pre = 0; pre < 2; pre++) {
                        fill(flush, FLUSH_BYTES, (byte) r);
                        Cuda.check(cuEventRecord(e[0], stream), "cuEventRecord");
                        if (pre == 1) {
                            k.prefetch().launch(spans, stream);
                        }
                        for (int g = 0; g < GAP_KERNELS; g++) {
                            fill(gap, GAP_BYTES, (byte) g);
                        }
                        Cuda.check(cuEventRecord(e[1], stream), "cuEventRecord");
                        k.gemv(DType.bf16, dx, dw, dy, in, out, stream);
                        Cuda.check(cuEventRecord(e[2], stream), "cuEventRecord");
                        Cuda.check(cuEventSynchronize(e[2]), "cuEventSynchronize");
                        gemv[pre][r] = elapsed(e[1], e[2]);
                        window[pre][r] = elapsed(e[0], e[2]);
                        byte[] y = a.download(dy, 2 * out);
                        if (yFirst == null) {
                            yFirst = y;
                        } else if (!Arrays.equals(yFirst, y)) {
                            bad++;
                        }
                    }
                }
                if (!Arrays.equals(w, a.download(dw, w.length))) {
                    bad++;
                }
                String nm = String.format(
                        Locale.ROOT,
                        "timed,16MiB gemv cold %.2f us,prefetched %.2f us; window %.2f / %.2f us",
                        median(gemv[0]) * 1e3,
                        median(gemv[1]) * 1e3,
                        median(window[0]) * 1e3,
                        median(window[1]) * 1e3);
                results.accept(Result.of("l2_prefetch", DType.bf16, nm, new KernelCheckMath.Stat(0, 0, bad)));
            } finally {
                for (CUevent x : e) {
                    cuEventDestroy(x);
                }
            }
        }
    }

    private static float elapsed(CUevent from, CUevent to) {
        float[] ms = {0};
        Cuda.check(cuEventElapsedTime(ms, from, to), "cuEventElapsedTime");
        return ms[0];
    }

    /** Sets {@code bytes} at {@code address} to {@code v} on the stream. */
    private void fill(long address, long bytes, byte v) {
        Cuda.check(
                cuMemsetD8Async(new CUdeviceptr().withByteOffset(address), v, bytes, stream),
                "cuMemsetD8Async(" + bytes + ")");
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
