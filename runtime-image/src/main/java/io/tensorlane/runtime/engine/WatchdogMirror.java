package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;

import java.nio.ByteBuffer;
import java.util.Optional;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * A rank's watchdog record read back without a synchronous copy: {@link Rank#awaitStream} enqueues an asynchronous
 * copy of the record into this pinned buffer on the stream it then synchronizes, so the record is read after the
 * stream's work as before, at the cost of one enqueue instead of a synchronous device-to-host copy after every step
 * (24-39 us a decode step on an H200 VM, 2026-12-01). Where the enqueue fails (a thread whose current context is not
 * the stream's), the caller reads the record synchronously instead.
 */
final class WatchdogMirror implements AutoCloseable {
    private final Pointer pinned = new Pointer();
    private final ByteBuffer host;

    WatchdogMirror() {
        Cuda.check(
                cuMemHostAlloc(pinned, WatchdogRecord.BYTES, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE),
                "cuMemHostAlloc(watchdog record)");
        host = pinned.getByteBuffer(0, WatchdogRecord.BYTES);
    }

    /** Enqueues the copy of {@code record} on {@code s}; the driver's result (0: enqueued). */
    int enqueue(CUdeviceptr record, CUstream s) {
        return cuMemcpyDtoHAsync(pinned, record, WatchdogRecord.BYTES, s);
    }

    /** The record as copied by the last {@link #enqueue}, once its stream is synchronized. */
    Optional<WatchdogRecord> read() {
        byte[] raw = new byte[WatchdogRecord.BYTES];
        host.get(0, raw);
        return WatchdogRecord.decode(raw);
    }

    @Override
    public void close() {
        cuMemFreeHost(pinned);
    }
}
