package io.tensorlane.runtime.cli;

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
     * Timed with {@link EventTimer} (median of 9 after one warm-up): the GEMV alone, and the window from the prefetch
     * (or where it would be) to the GEMV's end.
     */
    private void timed() {
        int in = 2048;
        int out = 4096;
        try (KernelCheckArena a = new KernelCheckArena()) {
            byte[] w = random(in * out);
            long dw = a.upload(w);
            long dx = a.upload(random(in));
            long dy = a.poisoned(2L * out);
            long flushAt = a.alloc(FLUSH_BYTES);
            long gapAt = a.alloc(GAP_BYTES);
            List<L2Prefetch.Span> spans = List.of(new L2Prefetch.Span(dw, 2L * in * out));
            Runnable flush = () -> fill(flushAt, FLUSH_BYTES, (byte) 1);
            Runnable prefetch = () -> k.prefetch().launch(spans, stream);
            Runnable gap = () -> {
                for (int g = 0; g < GAP_KERNELS; g++) {
                    fill(gapAt, GAP_BYTES, (byte) g);
                }
            };
            Runnable gemv = () -> k.gemv(DType.bf16, dx, dw, dy, in, out, stream);
            double gemvCold = EventTimer.median(stream, 1, 9, all(flush, gap), gemv);
            byte[] yCold = a.download(dy, 2 * out);
            double gemvPre = EventTimer.median(stream, 1, 9, all(flush, prefetch, gap), gemv);
            byte[] yPre = a.download(dy, 2 * out);
            double windowCold = EventTimer.median(stream, 1, 9, flush, all(gap, gemv));
            double windowPre = EventTimer.median(stream, 1, 9, flush, all(prefetch, gap, gemv));
            long bad = (Arrays.equals(yCold, yPre) ? 0 : 1)
                    + (Arrays.equals(yCold, a.download(dy, 2 * out)) ? 0 : 1)
                    + (Arrays.equals(w, a.download(dw, w.length)) ? 0 : 1);
            String nm = String.format(
                    Locale.ROOT,
                    "timed,16MiB gemv cold %.2f us,prefetched %.2f us; window %.2f / %.2f us",
                    gemvCold,
                    gemvPre,
                    windowCold,
                    windowPre);
            results.accept(Result.of("l2_prefetch", DType.bf16, nm, new KernelCheckMath.Stat(0, 0, bad)));
        }
    }

    private static Runnable all(Runnable... steps) {
        return () -> {
            for (Runnable r : steps) {
                r.run();
            }
        };
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
}
