package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import io.tensorlane.runtime.engine.Cuda;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;

/** Takes a fraction of each GPU's free memory, the way a static memory pool would (selftest --occupy-fraction). */
final class MemoryHog implements AutoCloseable {
    private record Held(CUdevice dev, CUcontext ctx, CUdeviceptr ptr) {}

    private final List<Held> held = new ArrayList<>();

    static MemoryHog take(int deviceCount, double fraction, PrintWriter out) {
        MemoryHog h = new MemoryHog();
        for (int d = 0; d < deviceCount; d++) {
            CUdevice dev = new CUdevice();
            Cuda.check(cuDeviceGet(dev, d), "cuDeviceGet");
            CUcontext ctx = new CUcontext();
            Cuda.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain");
            Cuda.check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
            long[] free = {0};
            long[] total = {0};
            Cuda.check(cuMemGetInfo(free, total), "cuMemGetInfo");
            long want = (long) (free[0] * fraction) / (2L << 20) * (2L << 20);
            CUdeviceptr p = new CUdeviceptr();
            Cuda.check(cuMemAlloc(p, want), "cuMemAlloc(static pool emulation, " + want + " bytes)");
            h.held.add(new Held(dev, ctx, p));
            cuMemGetInfo(free, total);
            out.printf(
                    "GPU %d: took %d bytes (%.4f of free) as a static pool; %d bytes left free%n",
                    d, want, fraction, free[0]);
        }
        return h;
    }

    @Override
    public void close() {
        for (Held x : held) {
            cuCtxSetCurrent(x.ctx());
            cuMemFree(x.ptr());
            cuDevicePrimaryCtxRelease(x.dev());
        }
        held.clear(); // idempotent: selftest closes it before the leak check, try-with-resources again
    }
}
