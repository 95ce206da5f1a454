package io.tensorlane.runtime.probe;

import static jcuda.driver.JCudaDriver.cuCtxEnablePeerAccess;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemcpyPeer;
import static jcuda.driver.JCudaDriver.cuMemcpyPeerAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import java.util.Arrays;
import java.util.SplittableRandom;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUresult;
import jcuda.driver.CUstream;

/**
 * {@code --measure}: for one ordered GPU pair, enables peer access, writes fresh random bytes from the source GPU into
 * a poisoned buffer on the destination GPU over P2P (cuMemcpyPeer with peer access enabled is a direct P2P copy),
 * reads them back to the host and compares byte for byte; then times {@link #REPEATS} copies with CUDA events after
 * {@link #WARMUP} warm-up copies and reports the median bandwidth. With src == dst it checks and times a local copy
 * (useful on a one-GPU machine to exercise the path; not an interconnect figure).
 */
public final class P2pMeasurer {
    static final int WARMUP = 3;
    static final int REPEATS = 20;
    private static final int PEER_ACCESS_ALREADY_ENABLED = 704;

    private final long bytes;
    private final SplittableRandom random;

    public P2pMeasurer(long bytes, long seed) {
        this.bytes = bytes;
        this.random = new SplittableRandom(seed);
    }

    /** The outcome of one direction: data came back intact, bandwidth (GB/s, null if not timed), why not. */
    public record Direction(boolean verified, Double gbps, String note) {}

    /** Checks and times src -> dst (CUDA ordinals). Never throws for a CUDA error; the note says what failed. */
    public Direction run(int srcOrdinal, int dstOrdinal) {
        CUdevice src = new CUdevice();
        CUdevice dst = new CUdevice();
        CUcontext srcCtx = new CUcontext();
        CUcontext dstCtx = new CUcontext();
        CUdeviceptr a = new CUdeviceptr();
        CUdeviceptr b = new CUdeviceptr();
        try {
            check(cuInit(0), "cuInit");
            check(cuDeviceGet(src, srcOrdinal), "cuDeviceGet(" + srcOrdinal + ")");
            check(cuDeviceGet(dst, dstOrdinal), "cuDeviceGet(" + dstOrdinal + ")");
            check(cuDevicePrimaryCtxRetain(srcCtx, src), "cuDevicePrimaryCtxRetain(src)");
            check(cuDevicePrimaryCtxRetain(dstCtx, dst), "cuDevicePrimaryCtxRetain(dst)");
            if (srcOrdinal != dstOrdinal) {
                enablePeer(srcCtx, dstCtx);
                enablePeer(dstCtx, srcCtx);
            }
            check(cuCtxSetCurrent(dstCtx), "cuCtxSetCurrent(dst)");
            check(cuMemAlloc(b, bytes), "cuMemAlloc(dst)");
            check(cuMemsetD8(b, (byte) 0xA5, bytes), "cuMemsetD8(dst)");
            check(cuCtxSetCurrent(srcCtx), "cuCtxSetCurrent(src)");
            check(cuMemAlloc(a, bytes), "cuMemAlloc(src)");
            byte[] sent = new byte[(int) bytes];
            random.nextBytes(sent);
            check(cuMemcpyHtoD(a, Pointer.to(sent), bytes), "cuMemcpyHtoD");
            check(cuMemcpyPeer(b, dstCtx, a, srcCtx, bytes), "cuMemcpyPeer");
            byte[] back = new byte[(int) bytes];
            check(cuCtxSetCurrent(dstCtx), "cuCtxSetCurrent(dst)");
            check(cuMemcpyDtoH(Pointer.to(back), b, bytes), "cuMemcpyDtoH");
            int bad = firstDifference(sent, back);
            if (bad >= 0) {
                return new Direction(false, null, "read-back differs at byte " + bad + " of " + bytes);
            }
            check(cuCtxSetCurrent(srcCtx), "cuCtxSetCurrent(src)");
            return new Direction(true, medianGbps(a, srcCtx, b, dstCtx), null);
        } catch (CudaCallFailed e) {
            return new Direction(false, null, e.getMessage());
        } finally {
            cuCtxSetCurrent(dstCtx);
            cuMemFree(b);
            cuCtxSetCurrent(srcCtx);
            cuMemFree(a);
            cuDevicePrimaryCtxRelease(src);
            cuDevicePrimaryCtxRelease(dst);
        }
    }

    private double medianGbps(CUdeviceptr a, CUcontext srcCtx, CUdeviceptr b, CUcontext dstCtx) {
        CUstream stream = new CUstream(); // the legacy default stream of the current (source) context
        CUevent start = new CUevent();
        CUevent stop = new CUevent();
        check(cuEventCreate(start, 0), "cuEventCreate");
        check(cuEventCreate(stop, 0), "cuEventCreate");
        try {
            for (int i = 0; i < WARMUP; i++) {
                check(cuMemcpyPeerAsync(b, dstCtx, a, srcCtx, bytes, stream), "cuMemcpyPeerAsync");
            }
            double[] ms = new double[REPEATS];
            float[] t = new float[1];
            for (int i = 0; i < REPEATS; i++) {
                check(cuEventRecord(start, stream), "cuEventRecord");
                check(cuMemcpyPeerAsync(b, dstCtx, a, srcCtx, bytes, stream), "cuMemcpyPeerAsync");
                check(cuEventRecord(stop, stream), "cuEventRecord");
                check(cuEventSynchronize(stop), "cuEventSynchronize");
                check(cuEventElapsedTime(t, start, stop), "cuEventElapsedTime");
                ms[i] = t[0];
            }
            Arrays.sort(ms);
            double median = (ms[REPEATS / 2 - 1] + ms[REPEATS / 2]) / 2;
            return Math.round(bytes / (median / 1e3) / 1e9 * 10) / 10.0;
        } finally {
            cuEventDestroy(start);
            cuEventDestroy(stop);
        }
    }

    private static void enablePeer(CUcontext from, CUcontext peer) {
        check(cuCtxSetCurrent(from), "cuCtxSetCurrent");
        int rc = cuCtxEnablePeerAccess(peer, 0);
        if (rc != CUresult.CUDA_SUCCESS && rc != PEER_ACCESS_ALREADY_ENABLED) {
            throw new CudaCallFailed("peer access not enabled: " + CUresult.stringFor(rc));
        }
    }

    /** Index of the first differing byte, -1 when equal. */
    static int firstDifference(byte[] x, byte[] y) {
        return Arrays.mismatch(x, y);
    }

    private static void check(int rc, String what) {
        if (rc != CUresult.CUDA_SUCCESS) {
            throw new CudaCallFailed(what + ": " + CUresult.stringFor(rc));
        }
    }

    private static final class CudaCallFailed extends RuntimeException {
        CudaCallFailed(String message) {
            super(message, null, false, false);
        }
    }
}
