package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpy2D;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.Checkpoint;
import io.tensorlane.runtime.model.Piece;
import io.tensorlane.runtime.model.TensorInfo;
import java.nio.ByteBuffer;
import java.util.function.LongConsumer;
import jcuda.Pointer;
import jcuda.driver.CUDA_MEMCPY2D;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUmemorytype;

/**
 * Copies one {@link Piece} of a checkpoint tensor from the memory-mapped file to its rows of a device buffer, in chunks
 * of at most 256 MiB: a plain copy where whole rows line up, else a pitched 2-D copy.
 */
final class PieceCopy {
    private static final long COPY_CHUNK_BYTES = 256L << 20;

    private PieceCopy() {}

    /**
     * Copies {@code pc} into {@code dst} (rows of {@code dstCols} elements of {@code eb} bytes: the model dtype's, or 1
     * for FP8); {@code progress} gets bytes.
     */
    static void copy(Checkpoint ck, Piece pc, CUdeviceptr dst, long dstCols, int eb, LongConsumer progress) {
        TensorInfo src = ck.require(pc.source());
        if (src.dtype().bytes() != eb) {
            throw new IllegalStateException(pc.source() + " is " + src.dtype() + ", not elements of " + eb + " bytes");
        }
        long srcCols = src.cols();
        boolean contiguous = pc.cols() == srcCols && dstCols == srcCols;
        long rowsPerChunk = Math.max(1, COPY_CHUNK_BYTES / (srcCols * eb));
        for (long r = 0; r < pc.rows(); r += rowsPerChunk) {
            long nr = Math.min(rowsPerChunk, pc.rows() - r);
            long srcOff = ((pc.srcRowStart() + r) * srcCols + pc.srcColStart()) * eb;
            long len = ((nr - 1) * srcCols + pc.cols()) * eb;
            ByteBuffer buf = ck.map(src, srcOff, len);
            CUdeviceptr to = dst.withByteOffset((pc.dstRowStart() + r) * dstCols * eb);
            if (contiguous) {
                Cuda.check(cuMemcpyHtoD(to, Pointer.to(buf), len), "upload " + pc.source());
            } else {
                CUDA_MEMCPY2D c = new CUDA_MEMCPY2D();
                c.srcMemoryType = CUmemorytype.CU_MEMORYTYPE_HOST;
                c.srcHost = Pointer.to(buf);
                c.srcPitch = srcCols * eb;
                c.dstMemoryType = CUmemorytype.CU_MEMORYTYPE_DEVICE;
                c.dstDevice = to;
                c.dstPitch = dstCols * eb;
                c.WidthInBytes = pc.cols() * eb;
                c.Height = nr;
                Cuda.check(
                        cuMemcpy2D(c), "upload " + pc.source() + " (rows " + (pc.srcRowStart() + r) + "+" + nr + ")");
            }
            progress.accept(nr * pc.cols() * eb);
        }
    }
}
