package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;
import static jcuda.driver.JCudaDriver.cuMemsetD16;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DeviceBuffer;
import io.tensorlane.contract.TerminationMessage;
import java.util.LinkedHashMap;
import java.util.Map;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUresult;

/** The device buffers of one rank, allocated exactly as {@link BufferLayout#buffers()} says. */
final class RankBuffers implements AutoCloseable {
    private final Map<String, CUdeviceptr> byName = new LinkedHashMap<>();

    /** Allocates in the current context; on CUDA OOM frees what it got and throws {@link CudaOutOfMemoryException}. */
    RankBuffers(BufferLayout layout, int device, int rank) {
        for (DeviceBuffer b : layout.buffers()) {
            CUdeviceptr p = new CUdeviceptr();
            int rc = cuMemAlloc(p, b.bytes());
            if (rc == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
                long[] free = {0};
                long[] total = {0};
                cuMemGetInfo(free, total);
                close();
                throw new CudaOutOfMemoryException(TerminationMessage.cudaOom(
                        TerminationMessage.PHASE_IPC_BUFFERS,
                        layout.totalBytesPerRank(),
                        free[0],
                        total[0],
                        device,
                        rank,
                        b.name()));
            }
            try {
                Cuda.check(rc, "cuMemAlloc(" + b.name() + ", " + b.bytes() + " bytes) on GPU " + device);
            } catch (CudaException e) {
                close();
                throw e;
            }
            byName.put(b.name(), p);
        }
    }

    /**
     * Zeroes the buffers the kernels' protocol starts from (signal flags, epoch counters, watchdog record and the push
     * variant's counters, pointer tables): epoch 1 is the first call, and they are never cleared again. Fills the push
     * buffer with its "not arrived" element ({@link BufferLayout#PUSH_EMPTY_ELEMENT}); each reader puts it back into what it took.
     */
    void clearProtocolState(BufferLayout layout) {
        for (String name : new String[] {"signal", "state", "rank-data"}) {
            Cuda.check(cuMemsetD8(get(name), (byte) 0, layout.buffer(name).bytes()), "cuMemsetD8(" + name + ")");
        }
        Cuda.check(
                cuMemsetD16(
                        get("push"),
                        (short) BufferLayout.PUSH_EMPTY_ELEMENT,
                        layout.buffer("push").bytes() / 2),
                "cuMemsetD16(push)");
    }

    CUdeviceptr get(String name) {
        CUdeviceptr p = byName.get(name);
        if (p == null) {
            throw new IllegalStateException("buffer " + name + " is not allocated");
        }
        return p;
    }

    @Override
    public void close() {
        for (CUdeviceptr p : byName.values()) {
            cuMemFree(p);
        }
        byName.clear();
    }
}
