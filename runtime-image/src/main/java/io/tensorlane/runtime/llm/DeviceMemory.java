package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.CudaOutOfMemoryException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;

/**
 * One rank's device allocations, counted by category (weights, kv-cache, activations). A CUDA OOM becomes a
 * {@link CudaOutOfMemoryException} carrying the termination message (phase = the category). Use on the rank's thread.
 */
final class DeviceMemory implements AutoCloseable {
    private final int device;
    private final int rank;
    private final List<CUdeviceptr> all = new ArrayList<>();
    private final Map<String, Long> bytesByPhase = new LinkedHashMap<>();

    DeviceMemory(int device, int rank) {
        this.device = device;
        this.rank = rank;
    }

    /** {@code bytes} (rounded up to 256) of device memory; zeroed when {@code zero}. */
    CUdeviceptr alloc(String phase, String what, long bytes, boolean zero) {
        long size = Math.max(256, (bytes + 255) / 256 * 256);
        CUdeviceptr p = new CUdeviceptr();
        int rc = cuMemAlloc(p, size);
        if (rc == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
            long[] free = {0};
            long[] total = {0};
            cuMemGetInfo(free, total);
            throw new CudaOutOfMemoryException(
                    TerminationMessage.cudaOom(phase, size, free[0], total[0], device, rank, what));
        }
        Cuda.check(rc, "cuMemAlloc(" + what + ", " + size + " bytes) on GPU " + device);
        all.add(p);
        bytesByPhase.merge(phase, size, Long::sum);
        if (zero) {
            Cuda.check(cuMemsetD8(p, (byte) 0, size), "cuMemsetD8(" + what + ")");
        }
        return p;
    }

    long bytes(String phase) {
        return bytesByPhase.getOrDefault(phase, 0L);
    }

    @Override
    public void close() {
        for (CUdeviceptr p : all) {
            cuMemFree(p);
        }
        all.clear();
    }
}
