package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/** One rank of a {@link Communicator}: its device, context, stream, buffers and worker thread. */
public final class Rank implements AutoCloseable {
    /** Where calls go that the custom kernels do not take (NCCL). */
    public interface Fallback {
        void allReduce(int rank, CUdeviceptr input, CUdeviceptr output, long count, DType dtype, CUstream stream);
    }

    private final Communicator comm;
    private final int index;
    private final int device;
    private final CUcontext context;
    private final KernelModule module;
    private final RankBuffers buffers;
    private final WatchdogMirror watchdogMirror;
    private final CUstream stream = new CUstream();
    private final ExecutorService worker;
    private volatile Thread workerThread;
    private final Map<Long, Integer> registered = new HashMap<>();
    private final RankLaunches launches;
    private final long stagingAddress;

    Rank(Communicator comm, int index, int device, CUcontext context, KernelModule module) {
        this.comm = comm;
        this.index = index;
        this.device = device;
        this.context = context;
        this.module = module;
        BufferLayout layout = comm.layout();
        this.buffers = new RankBuffers(layout, device, index);
        WatchdogMirror mirror = null;
        try {
            mirror = new WatchdogMirror();
            Cuda.check(cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING), "cuStreamCreate");
            buffers.clearProtocolState(layout);
        } catch (RuntimeException e) {
            if (mirror != null) {
                mirror.close();
            }
            buffers.close();
            throw e;
        }
        this.watchdogMirror = mirror;
        this.stagingAddress = Cuda.address(buffers.get("staging"));
        this.launches = new RankLaunches(
                module,
                layout,
                Cuda.address(buffers.get("rank-data")),
                Cuda.address(buffers.get("state")),
                index,
                TimeUnit.MILLISECONDS.toNanos(comm.config().timeoutMillis()));
        this.registered.put(stagingAddress, 0);
        this.worker = SpinHandoff.singleThread(
                r -> {
                    Thread t = new Thread(r, "tensorlane-rank-" + index);
                    t.setDaemon(true);
                    return t;
                },
                SpinHandoff.WORKER_SPIN_NANOS);
        try {
            worker.submit(() -> {
                        workerThread = Thread.currentThread();
                        Cuda.check(cuCtxSetCurrent(context), "cuCtxSetCurrent on rank thread");
                        return null;
                    })
                    .get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException("rank " + index + ": worker thread failed to start", e);
        }
    }

    void uploadFixedSlots(List<Rank> all) {
        String[] names = {"staging", "scratch", "signal", "push"}; // slots 0..3, BufferLayout.FIXED_POINTER_SLOTS
        for (int slot = 0; slot < names.length; slot++) {
            long[] addrs = new long[BufferLayout.MAX_RANKS];
            for (Rank r : all) {
                addrs[r.index] = Cuda.address(r.buffers.get(names[slot]));
            }
            writeSlot(slot, addrs);
        }
    }

    void writeSlot(int slot, long[] addrs) {
        Cuda.check(
                cuMemcpyHtoD(
                        buffers.get("rank-data").withByteOffset(slot * BufferLayout.pointerSlotBytes()),
                        Pointer.to(addrs),
                        BufferLayout.pointerSlotBytes()),
                "upload pointer table slot " + slot);
        if (slot >= BufferLayout.FIXED_POINTER_SLOTS) {
            synchronized (registered) {
                registered.put(addrs[index], slot);
            }
        }
    }

    public int index() {
        return index;
    }

    public int device() {
        return device;
    }

    public CUcontext context() {
        return context;
    }

    /** This rank's own non-blocking stream. */
    public CUstream stream() {
        return stream;
    }

    public KernelModule module() {
        return module;
    }

    /** The staging buffer: an input already placed here is reduced without a copy. */
    public CUdeviceptr staging() {
        return buffers.get("staging");
    }

    <T> Future<T> submit(Callable<T> task) {
        return worker.submit(task);
    }

    /** Runs {@code task} on this rank's worker thread (context current) and waits. */
    public <T> T call(Callable<T> task) {
        try {
            return SpinHandoff.get(submit(task), SpinHandoff.CALLER_SPIN_NANOS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    /** An allreduce runs on the rank's worker thread, on a communicator no watchdog has broken. */
    private void requireUsable() {
        if (Thread.currentThread() != workerThread) {
            throw new IllegalStateException("rank " + index
                    + ": call allReduce on the rank's worker thread (Communicator.onEachRank or Rank.call)");
        }
        if (comm.isBroken()) {
            throw new IllegalStateException("communicator is broken (an earlier allreduce timed out); rebuild it");
        }
    }

    /** The algorithm an allreduce of {@code bytes} takes (the communicator's table; NCCL past the buffers). */
    public Algorithm route(long bytes) {
        return comm.route(bytes);
    }

    /** Allreduce (sum) with the algorithm the table picks for {@code count * dtype} bytes. */
    public void allReduce(CUdeviceptr input, CUdeviceptr output, long count, DType dtype, CUstream stream) {
        allReduce(input, output, count, dtype, stream, comm.route(Math.multiplyExact(count, (long) dtype.bytes())));
    }

    /**
     * Allreduce (sum) of {@code count} elements with a forced algorithm. Every rank must make the same calls in the
     * same order with the same count, dtype and algorithm. Asynchronous on {@code stream}; the output must not be
     * any rank's input and must be 16-byte aligned. OneStage takes its push variant ({@link PushVariant}) where the
     * communicator's {@link Communicator#setPush push} is on and the message fits.
     */
    public void allReduce(
            CUdeviceptr input, CUdeviceptr output, long count, DType dtype, CUstream stream, Algorithm algorithm) {
        requireUsable();
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, got " + count);
        }
        long bytes = Math.multiplyExact(count, (long) dtype.bytes());
        if (algorithm == Algorithm.NCCL || bytes > comm.layout().maxMessageBytes()) {
            Fallback f = comm.fallback();
            if (f == null) {
                throw new IllegalArgumentException(
                        algorithm == Algorithm.NCCL
                                ? "the algorithm table routes " + bytes + " bytes to NCCL but no NCCL fallback is set"
                                : "message of " + bytes + " bytes exceeds the custom allreduce's buffers ("
                                        + comm.layout().maxMessageBytes() + " bytes) and no NCCL fallback is set");
            }
            f.allReduce(index, input, output, count, dtype, stream);
            return;
        }
        long out = Cuda.address(output);
        if (out % BufferLayout.VECTOR_BYTES != 0) {
            throw new IllegalArgumentException("output must be 16-byte aligned");
        }
        if (comm.worldSize() == 1) {
            Cuda.check(cuMemcpyDtoDAsync(output, input, bytes, stream), "cuMemcpyDtoDAsync");
            return;
        }
        int blocks = LaunchPlan.blocksFor(count, dtype, comm.maxBlocks());
        if (algorithm == Algorithm.OneStage && comm.pushes(dtype, count)) {
            long in = Cuda.address(input);
            fenced(() -> launches.push(dtype, in, out, count, blocks, stream));
            return;
        }
        withInputSlot(input, bytes, stream, slot -> launches.pull(algorithm, dtype, slot, out, count, blocks, stream));
    }

    /** Whether {@link #allReduceAddRmsNorm} takes {@code norm} ({@link FusedNorm#fits} for this communicator's route). */
    public boolean fits(FusedNorm norm) {
        return FusedNorm.fits(comm.worldSize(), comm.route(norm.bytes()), norm.dtype(), norm.rows(), norm.hidden());
    }

    /**
     * The allreduce of {@code norm.rows() x norm.hidden()} elements fused with the residual add + RMSNorm of every
     * reduced row ({@link FusedNorm}): what {@link #allReduce} with OneStage followed by the model's add + RMSNorm
     * kernel computes, bit for bit, in one kernel (on the push variant where {@link #allReduce} would push). Only for
     * what {@link #fits} takes (else an IllegalArgumentException); the same rules as {@link #allReduce}: every rank
     * makes the same calls.
     */
    public void allReduceAddRmsNorm(CUdeviceptr input, FusedNorm norm, CUstream stream) {
        requireUsable();
        if (!fits(norm)) {
            throw new IllegalArgumentException("the fused allreduce + RMSNorm does not take " + norm + " on "
                    + comm.worldSize() + " rank(s) (route " + comm.route(norm.bytes()) + ")");
        }
        long bytes = norm.bytes();
        int blocks = Math.min(norm.rows(), comm.maxBlocks());
        if (comm.pushes(norm.dtype(), norm.count())) {
            long in = Cuda.address(input);
            fenced(() -> launches.pushNorm(in, norm, blocks, stream));
            return;
        }
        withInputSlot(input, bytes, stream, slot -> launches.pullNorm(norm, slot, blocks, stream));
    }

    /**
     * Runs {@code launch} with the pointer-table slot of {@code input}: its registered slot, or 0 after copying it into
     * the staging buffer (eager path: the end barrier of the previous call guarantees no peer still reads staging;
     * stream order puts the copy before the kernel's start barrier). Virtual ranks launch inside the launch fence.
     */
    private void withInputSlot(CUdeviceptr input, long bytes, CUstream stream, java.util.function.IntConsumer launch) {
        Integer registeredSlot;
        synchronized (registered) {
            registeredSlot = registered.get(Cuda.address(input));
        }
        fenced(() -> {
            if (registeredSlot == null) {
                Cuda.check(cuMemcpyDtoDAsync(staging(), input, bytes, stream), "cuMemcpyDtoDAsync(input -> staging)");
            }
            launch.accept(registeredSlot == null ? 0 : registeredSlot);
        });
    }

    /** Runs {@code enqueue} inside the launch fence on virtual ranks, directly on real ones. */
    private void fenced(Runnable enqueue) {
        LaunchFence fence = comm.fence();
        if (fence != null) {
            fence.around(enqueue);
        } else {
            enqueue.run();
        }
    }

    /**
     * The watchdog check on virtual ranks (selftest): meets the peers at the launch fence without enqueuing an
     * allreduce, so their kernels wait on the GPU for a rank that never arrives there. Does nothing on real ranks.
     */
    public void skipAllreduceLaunch() {
        fenced(() -> {});
    }

    /**
     * Notes a CUDA graph's capture or replay ({@code kind}, a constant text) of decode bucket {@code bucket} in the
     * journal of launches the watchdog's message shows (a replay's allreduces are not launched one by one). Rank's worker
     * thread only.
     */
    public void noteGraph(String kind, int bucket) {
        launches.noteGraph(kind, bucket);
    }

    /**
     * How many push-variant calls this rank has completed (its call counter in {@code state}; a synchronous read, so
     * after {@link #synchronize}). selftest checks with it that the push kernel ran where it should.
     */
    public long pushCalls() {
        int[] v = {0};
        Cuda.check(
                cuMemcpyDtoH(
                        Pointer.to(v),
                        buffers.get("state").withByteOffset(comm.layout().pushStateOffset()),
                        4),
                "read the push call counter");
        return Integer.toUnsignedLong(v[0]);
    }

    /** Reads the watchdog record (synchronous copy; does not wait for this rank's stream). */
    public Optional<WatchdogRecord> watchdog() {
        byte[] raw = new byte[WatchdogRecord.BYTES];
        Cuda.check(cuMemcpyDtoH(Pointer.to(raw), errorRecord(), raw.length), "read watchdog record");
        return WatchdogRecord.decode(raw);
    }

    /** Waits for this rank's stream, then throws {@link AllreduceTimeoutException} if the watchdog fired. */
    public void synchronize() {
        synchronize(stream);
    }

    public void synchronize(CUstream s) {
        checkWatchdog(awaitStream(s));
    }

    /** The result of {@link #awaitStream}: the driver's, and whether the watchdog record was copied with the stream. */
    public record StreamWait(int rc, boolean mirrored) {}

    /** The first half of {@link #synchronize()}: waits for this rank's stream (the record's copy enqueued first). */
    public StreamWait awaitStream() {
        return awaitStream(stream);
    }

    private StreamWait awaitStream(CUstream s) {
        int rc = watchdogMirror.enqueue(errorRecord(), s);
        if (rc != 0 && !mirrorRefusalLogged) {
            mirrorRefusalLogged = true; // each step then reads the record with a synchronous copy (~20-40 us)
            java.util.logging.Logger.getLogger(Rank.class.getName())
                    .warning("rank " + index + ": the watchdog record's asynchronous copy was refused (CUDA error " + rc
                            + "); it is read with a synchronous copy after every step");
        }
        return new StreamWait(cuStreamSynchronize(s), rc == 0);
    }

    /** Whether {@link #awaitStream} has said that the driver refused the record's asynchronous copy. */
    private volatile boolean mirrorRefusalLogged;

    /** The second half of {@link #synchronize()}: throws if the watchdog fired or the wait failed. */
    public void checkWatchdog(StreamWait wait) {
        Optional<WatchdogRecord> w = wait.mirrored() && wait.rc() == 0 ? watchdogMirror.read() : watchdog();
        if (w.isPresent()) {
            comm.markBroken();
            throw new AllreduceTimeoutException(w.get(), launches.recent());
        }
        Cuda.check(wait.rc(), "cuStreamSynchronize(rank " + index + ")");
    }

    private CUdeviceptr errorRecord() {
        return buffers.get("state").withByteOffset(comm.layout().errorRecordOffset());
    }

    @Override
    public void close() {
        try {
            cuStreamSynchronize(stream);
            cuStreamDestroy(stream);
            watchdogMirror.close();
        } finally {
            buffers.close();
            worker.shutdownNow();
        }
    }
}
