package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import io.tensorlane.runtime.engine.CapturedGraph;
import io.tensorlane.runtime.engine.Cuda;
import java.util.Arrays;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;

/**
 * The GPU time of one launch on a stream: CUDA events around each of many, after a warm-up, the median; eager (each
 * launch from the host, its launch cost included) or replayed from a captured graph (as a decode step runs it).
 */
final class EventTimer {
    private EventTimer() {}

    /** The median of {@code iters} timed runs of {@code launch} after {@code warmup} untimed ones, in microseconds. */
    static double median(CUstream s, int warmup, int iters, Runnable launch) {
        return median(s, warmup, iters, () -> {}, launch);
    }

    /**
     * {@link #median(CUstream, int, int, Runnable)} with {@code setup} enqueued before every run, warm-up and timed,
     * outside the timed events (what each run needs first: a flushed cache, a prefetch).
     */
    static double median(CUstream s, int warmup, int iters, Runnable setup, Runnable launch) {
        for (int i = 0; i < warmup; i++) {
            setup.run();
            launch.run();
        }
        double[] us = new double[iters];
        CUevent e0 = new CUevent();
        CUevent e1 = new CUevent();
        Cuda.check(cuEventCreate(e0, 0), "cuEventCreate");
        Cuda.check(cuEventCreate(e1, 0), "cuEventCreate");
        try {
            float[] ms = {0};
            for (int i = 0; i < iters; i++) {
                setup.run();
                Cuda.check(cuEventRecord(e0, s), "cuEventRecord");
                launch.run();
                Cuda.check(cuEventRecord(e1, s), "cuEventRecord");
                Cuda.check(cuEventSynchronize(e1), "cuEventSynchronize");
                Cuda.check(cuEventElapsedTime(ms, e0, e1), "cuEventElapsedTime");
                us[i] = ms[0] * 1e3;
            }
        } finally {
            cuEventDestroy(e0);
            cuEventDestroy(e1);
        }
        Arrays.sort(us);
        return us[iters / 2];
    }

    /**
     * The median time of one launch of {@code launch} inside a CUDA graph of {@code reps} of them (captured once; each
     * timing replays it and divides by {@code reps}): no host launch cost between the kernels, as in a decode step's
     * graph, but without its programmatic edges. {@code launch} may vary its inputs from call to call (the capture
     * keeps each call's).
     */
    static double graphMedian(CUstream s, int warmup, int iters, int reps, Runnable launch) {
        if (reps < 1) {
            throw new IllegalArgumentException("reps must be >= 1, got " + reps);
        }
        try (CapturedGraph g = CapturedGraph.capture(s, () -> {
            for (int i = 0; i < reps; i++) {
                launch.run();
            }
        })) {
            return median(s, warmup, iters, () -> g.launch(s)) / reps;
        }
    }
}
