package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;

import io.tensorlane.runtime.engine.Cuda;
import java.util.Arrays;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;

/** The GPU time of one launch on a stream: CUDA events around each of many, after a warm-up, the median. */
final class EventTimer {
    private EventTimer() {}

    /** The median of {@code iters} timed runs of {@code launch} after {@code warmup} untimed ones, in microseconds. */
    static double median(CUstream s, int warmup, int iters, Runnable launch) {
        for (int i = 0; i < warmup; i++) {
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
}
