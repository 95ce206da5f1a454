package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpy2D;
import static jcuda.driver.JCudaDriver.cuMemcpy2DAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD32Async;

import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.TpLayout;
import jcuda.Pointer;
import jcuda.driver.CUDA_MEMCPY2D;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUmemorytype;
import jcuda.driver.CUstream;

/**
 * One rank's fp32 logits buffers for up to {@code rows} rows. The vocabulary-parallel LM head writes this rank's shard
 * ({@link #local}, {@code vocabPerRank} columns); with TP > 1 the shard is placed at its columns of a zeroed
 * full-vocabulary row ({@link #full}, registered with the communicator) and an allreduce of those rows gives every
 * rank the whole logits ({@link #out}). With TP 1 the three are one buffer.
 */
final class RankLogits {
    final CUdeviceptr local;
    final CUdeviceptr full;
    final CUdeviceptr out;
    private final int shardCols;
    private final int paddedCols;
    private final int rankIndex;
    private final boolean gathered;

    RankLogits(DeviceMemory mem, String phase, TpLayout tpl, int rankIndex, int rows) {
        this.shardCols = tpl.vocabPerRank();
        this.paddedCols = tpl.vocabPadded();
        this.rankIndex = rankIndex;
        this.gathered = tpl.tp() > 1;
        local = mem.alloc(phase, "logits (local vocab)", 4L * rows * shardCols, true);
        full = gathered ? mem.alloc(phase, "logits (gather)", 4L * rows * paddedCols, true) : local;
        out = gathered ? mem.alloc(phase, "logits", 4L * rows * paddedCols, true) : local;
    }

    /** Whether the rows must be gathered over the ranks (TP > 1). */
    boolean gathered() {
        return gathered;
    }

    /** Row stride (floats) of {@link #out}. */
    int stride() {
        return gathered ? paddedCols : shardCols;
    }

    /** Elements of {@code m} full rows (what the gathering allreduce sums). */
    long fullCount(int m) {
        return (long) m * paddedCols;
    }

    /** Enqueues: {@link #full} zeroed, this rank's {@code m} shard rows copied to their columns of it. */
    void placeShard(int m, CUstream s) {
        Cuda.check(cuMemsetD32Async(full, 0, fullCount(m), s), "cuMemsetD32Async(logits)");
        CUDA_MEMCPY2D c = new CUDA_MEMCPY2D();
        c.srcMemoryType = CUmemorytype.CU_MEMORYTYPE_DEVICE;
        c.srcDevice = local;
        c.srcPitch = 4L * shardCols;
        c.dstMemoryType = CUmemorytype.CU_MEMORYTYPE_DEVICE;
        c.dstDevice = full.withByteOffset(4L * shardCols * rankIndex);
        c.dstPitch = 4L * paddedCols;
        c.WidthInBytes = 4L * shardCols;
        c.Height = m;
        Cuda.check(cuMemcpy2DAsync(c, s), "gather logits");
    }

    /** Copies {@code m} rows of {@link #out} ({@code vocab} floats each) to the host (after the stream finished). */
    float[] read(int m, int vocab) {
        float[] host = new float[m * vocab];
        CUDA_MEMCPY2D c = new CUDA_MEMCPY2D();
        c.srcMemoryType = CUmemorytype.CU_MEMORYTYPE_DEVICE;
        c.srcDevice = out;
        c.srcPitch = 4L * stride();
        c.dstMemoryType = CUmemorytype.CU_MEMORYTYPE_HOST;
        c.dstHost = Pointer.to(host);
        c.dstPitch = 4L * vocab;
        c.WidthInBytes = 4L * vocab;
        c.Height = m;
        Cuda.check(cuMemcpy2D(c), "read logits");
        return host;
    }
}
