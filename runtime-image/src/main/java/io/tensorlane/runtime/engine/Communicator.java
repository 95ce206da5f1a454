package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuCtxEnablePeerAccess;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceCanAccessPeer;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRelease;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Function;
import java.util.logging.Logger;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUresult;

/**
 * The custom allreduce between the GPUs of one pod, in one JVM: one worker thread per rank, the primary context
 * of each device, peer access between distinct devices, buffers allocated from the {@link BufferLayout}, pointer
 * tables uploaded. Work for a rank runs on that rank's thread: {@link #onEachRank} or {@link Rank#call}.
 *
 * <pre>
 * try (Communicator comm = Communicator.create(CommunicatorConfig.of(List.of(0, 1, 2, 3), 8 << 20))) {
 *   comm.onEachRank(r -> { r.allReduce(in[r.index()], out[r.index()], count, DType.bf16, r.stream()); return null; });
 *   comm.synchronize();   // waits for every rank's stream and throws AllreduceTimeoutException if the watchdog fired
 * }
 * </pre>
 */
public final class Communicator implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Communicator.class.getName());

    private final CommunicatorConfig config;
    private final Map<Integer, CUcontext> contexts = new LinkedHashMap<>();
    private final Map<Integer, KernelModule> modules = new LinkedHashMap<>();
    private final List<Rank> ranks = new ArrayList<>();
    private int maxBlocks;
    private int nextSlot = BufferLayout.FIXED_POINTER_SLOTS;
    private volatile boolean broken;
    /** Virtual ranks only: host barriers around each allreduce launch (see LaunchFence); null otherwise. */
    private final LaunchFence fence;

    private volatile Rank.Fallback fallback;
    private volatile boolean push;
    private boolean closed;

    private Communicator(CommunicatorConfig config) {
        this.fence = config.virtual() && config.devices().size() > 1
                ? new LaunchFence(config.devices().size(), Math.max(config.timeoutMillis(), 30_000))
                : null;
        this.config = config;
    }

    /**
     * Builds the communicator. CUDA OOM while allocating the buffers ends in {@link CudaOutOfMemoryException}
     * (everything allocated so far is freed).
     */
    public static Communicator create(CommunicatorConfig config) {
        Communicator c = new Communicator(config);
        try {
            c.open();
            return c;
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * The driver settings virtual ranks need ({@code SharedContextEnv}: eager module loading, 32 hardware queues).
     * They take effect only before the driver initializes: {@link Cuda#init(java.util.List)} applies them for a list of
     * devices that repeats one, {@link Cuda#initForWorlds} for a command that places ranks by the GPU count. Kept
     * where the user set them; idempotent.
     */
    static void prepareVirtualRanks() {
        SharedContextEnv.apply().forEach(w -> LOG.warning("communicator: " + w));
    }

    private void open() {
        Cuda.init(config.devices());
        BufferLayout layout = config.layout();
        maxBlocks = layout.blocks();
        for (int d : config.devices().stream().distinct().toList()) {
            CUdevice dev = new CUdevice();
            Cuda.check(cuDeviceGet(dev, d), "cuDeviceGet(" + d + ")");
            CUcontext ctx = new CUcontext();
            Cuda.check(cuDevicePrimaryCtxRetain(ctx, dev), "cuDevicePrimaryCtxRetain(GPU " + d + ")");
            contexts.put(d, ctx);
            setCurrent(d);
            KernelModule m = new KernelModule();
            modules.put(d, m);
            int[] sms = {0};
            Cuda.check(
                    cuDeviceGetAttribute(sms, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev),
                    "cuDeviceGetAttribute(SM count)");
            maxBlocks = Math.min(
                    maxBlocks,
                    LaunchPlan.maxBlocks(layout.blocks(), m.residentBlocksPerSm(), sms[0], config.ranksOn(d)));
        }
        enablePeerAccess();
        for (int r = 0; r < config.devices().size(); r++) {
            int d = config.devices().get(r);
            setCurrent(d);
            ranks.add(new Rank(this, r, d, contexts.get(d), modules.get(d)));
        }
        for (Rank r : ranks) {
            setCurrent(r.device());
            r.uploadFixedSlots(ranks);
        }
        LOG.info(() -> "communicator: " + config.devices().size() + " ranks on GPUs " + config.devices()
                + (config.virtual() ? " (virtual ranks)" : "") + ", " + maxBlocks + " blocks max, "
                + layout.totalBytesPerRank() + " bytes of buffers per rank");
    }

    private void enablePeerAccess() {
        List<Integer> devs = new ArrayList<>(contexts.keySet());
        for (int a : devs) {
            for (int b : devs) {
                if (a == b) {
                    continue;
                }
                CUdevice da = new CUdevice();
                CUdevice db = new CUdevice();
                cuDeviceGet(da, a);
                cuDeviceGet(db, b);
                int[] can = {0};
                Cuda.check(cuDeviceCanAccessPeer(can, da, db), "cuDeviceCanAccessPeer(" + a + ", " + b + ")");
                if (can[0] == 0) {
                    throw new IllegalStateException(
                            "GPU " + a + " cannot access GPU " + b + " peer-to-peer: the custom allreduce needs P2P "
                                    + "between every pair of the pod's GPUs; use NCCL on this node");
                }
                setCurrent(a);
                int rc = cuCtxEnablePeerAccess(contexts.get(b), 0);
                if (rc != CUresult.CUDA_SUCCESS && rc != CUresult.CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
                    Cuda.check(rc, "cuCtxEnablePeerAccess(" + a + " -> " + b + ")");
                }
            }
        }
    }

    void setCurrent(int device) {
        Cuda.check(cuCtxSetCurrent(contexts.get(device)), "cuCtxSetCurrent(GPU " + device + ")");
    }

    public CommunicatorConfig config() {
        return config;
    }

    public BufferLayout layout() {
        return config.layout();
    }

    public int worldSize() {
        return ranks.size();
    }

    public Rank rank(int r) {
        return ranks.get(r);
    }

    public List<Rank> ranks() {
        return List.copyOf(ranks);
    }

    /** The most blocks one kernel launch uses (co-residency of virtual ranks taken into account). */
    public int maxBlocks() {
        return maxBlocks;
    }

    public boolean isBroken() {
        return broken;
    }

    void markBroken() {
        broken = true;
    }

    /** Where messages go when the table says NCCL or they are larger than the buffers (optional). */
    public void setFallback(Rank.Fallback fallback) {
        this.fallback = fallback;
    }

    /**
     * Whether OneStage calls take its push variant where it fits ({@link PushVariant#fits}: every rank stores its input
     * into its peers' push buffers, no barrier). Off unless set; set it before the ranks' calls (it is read at each
     * call, and all ranks must take the same kernel).
     */
    public void setPush(boolean on) {
        this.push = on;
    }

    public boolean push() {
        return push;
    }

    /** Whether a OneStage call of {@code count} elements of {@code dtype} takes the push variant: push on and it fits. */
    public boolean pushes(DType dtype, long count) {
        return push && PushVariant.fits(config.layout(), dtype, count);
    }

    /**
     * The algorithm an allreduce of {@code bytes} runs with: the table's choice where it covers the size, NCCL where it
     * says so, where it does not cover the size or where the message exceeds the custom allreduce's buffers.
     */
    public Algorithm route(long bytes) {
        return route(config.table(), config.layout().maxMessageBytes(), bytes);
    }

    static Algorithm route(AlgorithmTable table, long maxMessageBytes, long bytes) {
        Algorithm a = bytes >= 1 && table.covers(bytes) ? table.select(bytes) : Algorithm.NCCL;
        return a != Algorithm.NCCL && bytes > maxMessageBytes ? Algorithm.NCCL : a;
    }

    /** The launch fence of virtual ranks, or null. */
    LaunchFence fence() {
        return fence;
    }

    Rank.Fallback fallback() {
        return fallback;
    }

    /** Runs {@code fn} on every rank's worker thread at once; returns results by rank; rethrows the first failure. */
    public <T> List<T> onEachRank(Function<Rank, T> fn) {
        List<Future<T>> futures = new ArrayList<>();
        for (Rank r : ranks) {
            futures.add(r.submit(() -> {
                try {
                    return fn.apply(r);
                } catch (RuntimeException | Error e) {
                    if (fence != null) {
                        fence.breakAll(); // peers waiting at the launch fence for this rank get an error instead of
                        // the timeout
                    }
                    throw e;
                }
            }));
        }
        List<T> out = new ArrayList<>();
        List<RuntimeException> failures = new ArrayList<>();
        for (Future<T> f : futures) {
            try {
                out.add(SpinHandoff.get(f, SpinHandoff.CALLER_SPIN_NANOS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for ranks", e);
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                RuntimeException re = c instanceof RuntimeException rt ? rt : new IllegalStateException(c);
                failures.add(re);
                out.add(null);
            }
        }
        if (failures.isEmpty()) {
            return out;
        }
        // a watchdog timeout first (the cause of the others), the other ranks' failures attached: every rank's view
        RuntimeException first = failures.stream()
                .filter(AllreduceTimeoutException.class::isInstance)
                .findFirst()
                .orElse(failures.get(0));
        failures.stream().filter(f -> f != first).forEach(first::addSuppressed);
        throw first;
    }

    /** Synchronizes every rank's own stream and checks every rank's watchdog record. */
    public void synchronize() {
        onEachRank(r -> {
            r.synchronize();
            return null;
        });
    }

    /**
     * Registers one input buffer per rank (e.g. a tensor a CUDA graph will reduce) so calls on it need no copy
     * into staging. Collective: pass every rank's address, index = rank. Returns the pointer-table slot.
     */
    public synchronized int registerInputs(List<jcuda.driver.CUdeviceptr> perRank) {
        if (perRank.size() != ranks.size()) {
            throw new IllegalArgumentException(
                    "registerInputs needs one buffer per rank (" + ranks.size() + "), got " + perRank.size());
        }
        if (nextSlot >= layout().pointerSlots()) {
            throw new IllegalStateException(
                    "all " + layout().graphBufferSlots() + " graph buffer slots are registered");
        }
        int slot = nextSlot++;
        long[] addrs = new long[BufferLayout.MAX_RANKS];
        for (int i = 0; i < perRank.size(); i++) {
            addrs[i] = Cuda.address(perRank.get(i));
            if (addrs[i] % BufferLayout.VECTOR_BYTES != 0) {
                throw new IllegalArgumentException("registered buffer of rank " + i + " is not 16-byte aligned");
            }
        }
        for (Rank r : ranks) {
            setCurrent(r.device());
            r.writeSlot(slot, addrs);
        }
        return slot;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Rank r : ranks) {
            try {
                setCurrent(r.device());
                r.close();
            } catch (RuntimeException e) {
                LOG.warning("closing rank " + r.index() + ": " + e.getMessage());
            }
        }
        for (Map.Entry<Integer, KernelModule> e : modules.entrySet()) {
            setCurrent(e.getKey());
            e.getValue().close();
        }
        for (int d : contexts.keySet()) {
            CUdevice dev = new CUdevice();
            cuDeviceGet(dev, d);
            cuDevicePrimaryCtxRelease(dev);
        }
        contexts.clear();
    }
}
