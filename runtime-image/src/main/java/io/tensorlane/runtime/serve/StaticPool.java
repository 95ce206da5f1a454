package io.tensorlane.runtime.serve;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;

import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.CudaOutOfMemoryException;
import java.util.ArrayList;
import java.util.List;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;

/**
 * The static memory pool (weights + KV cache in a real server): {@code fraction x total} bytes of each device, taken
 * first, as SGLang's {@code mem_fraction_static} is. A fraction that leaves too little fails here with CUDA OOM, phase
 * {@code static-pool}, or later when the allreduce buffers do not fit, phase {@code ipc-buffers}.
 */
final class StaticPool implements AutoCloseable {
    private record Held(CUdevice dev, CUdeviceptr ptr, long bytes) {}

    private final List<Held> held = new ArrayList<>();

    /**
     * Takes {@code fraction x total} of each device, or, when {@code leaveFreeBytes > 0}, all free memory but that many
     * bytes (a test of the allreduce buffers' own OOM, phase ipc-buffers, as in the seed's incident).
     */
    static StaticPool take(List<Integer> devices, double fraction, long leaveFreeBytes) {
        Cuda.init(devices); // before the communicator: virtual ranks' driver settings must precede the driver's start
        StaticPool pool = new StaticPool();
        try {
            for (int d : devices.stream().distinct().toList()) {
                CUdevice dev = new CUdevice();
                Cuda.check(cuDeviceGet(dev, d), "cuDeviceGet(" + d + ")");
                CUcontext ctx = new CUcontext();
                Cuda.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain(GPU " + d + ")");
                Cuda.check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent(GPU " + d + ")");
                long[] free = {0};
                long[] total = {0};
                Cuda.check(cuMemGetInfo(free, total), "cuMemGetInfo(GPU " + d + ")");
                long want = leaveFreeBytes > 0
                        ? Math.max(0, free[0] - leaveFreeBytes) / BufferLayout.PEER_GRANULE * BufferLayout.PEER_GRANULE
                        : bytesFor(fraction, total[0]);
                CUdeviceptr p = new CUdeviceptr();
                int rc = want > free[0] ? CUresult.CUDA_ERROR_OUT_OF_MEMORY : cuMemAlloc(p, want);
                if (rc == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
                    cuDevicePrimaryCtxRelease(dev);
                    throw new CudaOutOfMemoryException(TerminationMessage.cudaOom(
                            TerminationMessage.PHASE_STATIC_POOL, want, free[0], total[0], d, null, "static-pool"));
                }
                Cuda.check(rc, "cuMemAlloc(static pool, " + want + " bytes) on GPU " + d);
                pool.held.add(new Held(dev, p, want));
            }
            return pool;
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    /** {@code fraction x total}, rounded down to CUDA's 2 MiB allocation granule (the planner budgets the same). */
    static long bytesFor(double fraction, long totalBytes) {
        return MemoryBudget.staticPoolBytes(fraction, totalBytes);
    }

    long bytes() {
        return held.stream().mapToLong(Held::bytes).sum();
    }

    @Override
    public void close() {
        for (Held h : held) {
            cuMemFree(h.ptr());
            cuDevicePrimaryCtxRelease(h.dev());
        }
        held.clear();
    }
}
