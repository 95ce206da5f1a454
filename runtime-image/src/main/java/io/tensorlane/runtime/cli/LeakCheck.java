package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import io.tensorlane.runtime.engine.Cuda;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;

/**
 * Checks that communicators give back what they took: holds each GPU's primary context (so it outlives the
 * communicators) and compares free device memory before and after.
 */
final class LeakCheck implements AutoCloseable {
    /** Lazily grown context state (local memory for spills, module pools) may stay; a leaked buffer set is ~19 MB per rank. */
    static final long TOLERANCE_BYTES = 32L << 20;

    private final List<CUdevice> devices = new ArrayList<>();
    private final List<CUcontext> contexts = new ArrayList<>();
    private final long[] before;

    LeakCheck(int deviceCount) {
        before = new long[deviceCount];
        for (int d = 0; d < deviceCount; d++) {
            CUdevice dev = new CUdevice();
            Cuda.check(cuDeviceGet(dev, d), "cuDeviceGet");
            CUcontext ctx = new CUcontext();
            Cuda.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
            devices.add(dev);
            contexts.add(ctx);
            before[d] = free(d);
        }
    }

    private long free(int d) {
        Cuda.check(cuCtxSetCurrent(contexts.get(d)), "cuCtxSetCurrent");
        long[] free = {0};
        long[] total = {0};
        Cuda.check(cuMemGetInfo(free, total), "cuMemGetInfo");
        return free[0];
    }

    /** Prints the difference per GPU; true when every GPU got back all but {@link #TOLERANCE_BYTES}. */
    boolean finish(PrintWriter out) {
        boolean ok = true;
        for (int d = 0; d < before.length; d++) {
            long lost = before[d] - free(d);
            boolean fine = lost <= TOLERANCE_BYTES;
            ok &= fine;
            out.printf(
                    "leak check GPU %d: %s, free memory %d bytes lower after all communicators closed (tolerance %d)%n",
                    d, fine ? "ok" : "FAILED", lost, TOLERANCE_BYTES);
        }
        return ok;
    }

    @Override
    public void close() {
        for (CUdevice dev : devices) {
            cuDevicePrimaryCtxRelease(dev);
        }
    }
}
