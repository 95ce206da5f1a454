package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.runtime.engine.Cuda;
import java.util.ArrayList;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/** Device buffers of one {@code kernelcheck} case, freed together. */
final class KernelCheckArena implements AutoCloseable {
    private final List<CUdeviceptr> buffers = new ArrayList<>();

    long alloc(long bytes) {
        CUdeviceptr p = new CUdeviceptr();
        Cuda.check(cuMemAlloc(p, Math.max(bytes, 1)), "cuMemAlloc(" + bytes + ")");
        buffers.add(p);
        return Cuda.address(p);
    }

    long upload(byte[] data) {
        long a = alloc(data.length);
        Cuda.check(cuMemcpyHtoD(buffers.get(buffers.size() - 1), Pointer.to(data), data.length), "cuMemcpyHtoD");
        return a;
    }

    /** A buffer filled with 0xFF bytes (NaN for bf16/fp16/fp32, -1 for int32). */
    long poisoned(long bytes) {
        long a = alloc(bytes);
        Cuda.check(cuMemsetD8(buffers.get(buffers.size() - 1), (byte) 0xFF, bytes), "cuMemsetD8");
        return a;
    }

    byte[] download(long address, int bytes) {
        for (CUdeviceptr p : buffers) {
            if (Cuda.address(p) == address) {
                byte[] raw = new byte[bytes];
                Cuda.check(cuMemcpyDtoH(Pointer.to(raw), p, bytes), "cuMemcpyDtoH");
                return raw;
            }
        }
        throw new IllegalArgumentException("not a buffer of this arena: 0x" + Long.toHexString(address));
    }

    @Override
    public void close() {
        for (CUdeviceptr p : buffers) {
            cuMemFree(p);
        }
    }
}
