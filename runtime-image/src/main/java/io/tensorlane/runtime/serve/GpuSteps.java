package io.tensorlane.runtime.serve;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemsetD16;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import io.tensorlane.contract.DeviceBuffer;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.CommunicatorConfig;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.CudaOutOfMemoryException;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.nccl.Nccl;
import io.tensorlane.runtime.nccl.NcclComm;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;
import jcuda.driver.CUresult;

/**
 * The synthetic tensor-parallel step on real GPUs. Start-up: the static pool ({@link StaticPool}), then the
 * {@link Communicator} (its buffers from {@link BufferLayout}), then per rank the activations and weights of a
 * row-parallel layer. A step runs, for every configured token count and every layer, on every rank:
 * {@code A = W1 · X} and {@code P = W2 · A} (bf16 GEMMs through {@link Gemm}, cuBLAS) and the allreduce of {@code P}
 * ({@code tokens x hidden x 2} bytes; 4 tokens at hidden 5376 is the seed's 42 KiB attention case). Latency is the GPU
 * time between CUDA events around the allreduce on rank 0's stream (it includes waiting for slower ranks). The first
 * step checks the result: every rank holds the same {@code P}, so the sum must be {@code worldSize x P}.
 */
final class GpuSteps implements StepSource {
    private final ServeConfig config;
    private final StepShape shape;
    private final List<Integer> devices;
    private final String ncclLib;
    private final boolean gemm;
    private final PrintWriter out;
    private long poolLeaveFreeBytes;
    private StaticPool pool;
    private Communicator comm;
    private NcclComm nccl;
    private final List<RankState> states = new ArrayList<>();
    private boolean checked;

    /** One rank's tensors, cuBLAS handle and (rank 0) timing events. */
    private static final class RankState {
        final List<CUdeviceptr> allocations = new ArrayList<>();
        CUdeviceptr x, w1, a, w2, p, o;
        Gemm gemm;
        CUevent[] start;
        CUevent[] end;
    }

    GpuSteps(
            ServeConfig config, StepShape shape, List<Integer> devices, String ncclLib, boolean gemm, PrintWriter out) {
        this.config = config;
        this.shape = shape;
        this.devices = List.copyOf(devices);
        this.ncclLib = ncclLib;
        this.gemm = gemm;
        this.out = out;
        if (config.allreduce() == Allreduce.Custom) {
            long largest = shape.largestMessageBytes();
            if (largest > config.maxMessageBytes() && CommunicatorConfig.sharesAGpu(devices)) {
                throw new IllegalArgumentException(
                        "the largest step message (" + largest + " bytes) exceeds " + EngineEnv.MAX_MESSAGE_BYTES + " ("
                                + config.maxMessageBytes() + ") and virtual ranks have no NCCL fallback");
            }
        }
    }

    /** Size the static pool to leave this many bytes free instead of by the fraction (testing the ipc-buffers OOM). */
    GpuSteps leavingFree(long bytes) {
        this.poolLeaveFreeBytes = bytes;
        return this;
    }

    @Override
    public void start() {
        pool = StaticPool.take(devices, config.memoryFraction(), poolLeaveFreeBytes);
        out.printf(
                "serve: static pool %d bytes (fraction %.4f of each GPU's memory)%n",
                pool.bytes(), config.memoryFraction());
        boolean custom = config.allreduce() == Allreduce.Custom;
        BufferLayout layout = custom ? config.layout() : BufferLayout.of(devices.size(), BufferLayout.VECTOR_BYTES);
        AlgorithmTable table = custom ? config.table() : AlgorithmTable.single(devices.size(), Algorithm.OneStage, 1);
        comm = Communicator.create(
                new CommunicatorConfig(devices, layout, table, CommunicatorConfig.DEFAULT_TIMEOUT_MILLIS));
        boolean virtual = CommunicatorConfig.sharesAGpu(devices);
        if (config.allreduce() == Allreduce.NCCL || (custom && !virtual)) {
            try {
                nccl = new NcclComm(Nccl.load(ncclLib), devices);
                comm.setFallback(nccl);
            } catch (RuntimeException e) {
                if (config.allreduce() == Allreduce.NCCL) {
                    throw e;
                }
                out.println("serve: no NCCL fallback (" + e.getMessage() + "); messages above "
                        + config.maxMessageBytes() + " bytes would fail");
            }
        }
        for (int i = 0; i < devices.size(); i++) {
            states.add(null);
        }
        comm.onEachRank(r -> {
            states.set(r.index(), allocate(r));
            return null;
        });
    }

    private RankState allocate(Rank r) {
        RankState s = new RankState();
        int h = shape.hidden();
        int hs = shape.shard(devices.size());
        int t = shape.maxTokens();
        s.x = alloc(s, r, (long) h * t, true);
        s.w1 = alloc(s, r, (long) hs * h, true);
        s.a = alloc(s, r, (long) hs * t, true);
        s.w2 = alloc(s, r, (long) h * hs, true);
        s.p = alloc(s, r, (long) h * t, true);
        s.o = alloc(s, r, (long) h * t, false);
        if (gemm) {
            s.gemm = Gemm.create(r.stream());
        }
        if (r.index() == 0) {
            int n = shape.tokens().size() * shape.layers();
            s.start = new CUevent[n];
            s.end = new CUevent[n];
            for (int i = 0; i < n; i++) {
                s.start[i] = new CUevent();
                s.end[i] = new CUevent();
                Cuda.check(cuEventCreate(s.start[i], CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate");
                Cuda.check(cuEventCreate(s.end[i], CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate");
            }
        }
        return s;
    }

    /** bf16 0.01 (the upper half of the fp32 bits): inputs are never zeros. */
    private static final short BF16_0_01 = (short) (Float.floatToIntBits(0.01f) >>> 16);

    /** A bf16 tensor of {@code elems} elements on the rank's device, filled with 0.01 when {@code fill}. */
    private CUdeviceptr alloc(RankState s, Rank r, long elems, boolean fill) {
        CUdeviceptr p = new CUdeviceptr();
        long bytes = elems * 2;
        int rc = cuMemAlloc(p, bytes);
        if (rc == CUresult.CUDA_ERROR_OUT_OF_MEMORY) {
            long[] free = {0};
            long[] total = {0};
            cuMemGetInfo(free, total);
            throw new CudaOutOfMemoryException(TerminationMessage.cudaOom(
                    "activations", bytes, free[0], total[0], r.device(), r.index(), "step tensors"));
        }
        Cuda.check(rc, "cuMemAlloc(step tensor, " + bytes + " bytes) on GPU " + r.device());
        s.allocations.add(p);
        if (fill) {
            Cuda.check(cuMemsetD16(p, BF16_0_01, elems), "cuMemsetD16(step tensor)");
        }
        return p;
    }

    @Override
    public long ipcBufferBytes() {
        return comm == null ? 0 : comm.layout().ipcBytesPerRank() * devices.size();
    }

    @Override
    public long localBufferBytes() {
        return comm == null
                ? 0
                : (comm.layout().buffers().stream()
                                .filter(b -> !b.peerVisible())
                                .mapToLong(DeviceBuffer::bytes)
                                .sum())
                        * devices.size();
    }

    @Override
    public long staticPoolBytes() {
        return pool == null ? 0 : pool.bytes();
    }

    @Override
    public List<AllreduceSample> step() {
        int world = devices.size();
        List<Algorithm> algos = new ArrayList<>();
        for (int tokens : shape.tokens()) {
            algos.add(algorithmFor(shape.messageBytes(tokens)));
        }
        comm.onEachRank(r -> {
            RankState s = states.get(r.index());
            int i = 0;
            for (int ti = 0; ti < shape.tokens().size(); ti++) {
                int tokens = shape.tokens().get(ti);
                for (int layer = 0; layer < shape.layers(); layer++, i++) {
                    if (s.gemm != null) {
                        s.gemm.bf16(shape.shard(world), tokens, shape.hidden(), s.w1, s.x, s.a);
                        s.gemm.bf16(shape.hidden(), tokens, shape.shard(world), s.w2, s.a, s.p);
                    }
                    if (s.start != null) {
                        Cuda.check(cuEventRecord(s.start[i], r.stream()), "cuEventRecord");
                    }
                    if (world > 1) {
                        r.allReduce(s.p, s.o, (long) tokens * shape.hidden(), DType.bf16, r.stream(), algos.get(ti));
                    }
                    if (s.end != null) {
                        Cuda.check(cuEventRecord(s.end[i], r.stream()), "cuEventRecord");
                    }
                }
            }
            r.synchronize();
            return null;
        });
        List<AllreduceSample> samples = new ArrayList<>();
        if (world > 1) {
            comm.rank(0).call(() -> {
                RankState s = states.get(0);
                int i = 0;
                for (int ti = 0; ti < shape.tokens().size(); ti++) {
                    for (int layer = 0; layer < shape.layers(); layer++, i++) {
                        float[] ms = {0};
                        Cuda.check(cuEventElapsedTime(ms, s.start[i], s.end[i]), "cuEventElapsedTime");
                        samples.add(new AllreduceSample(
                                shape.messageBytes(shape.tokens().get(ti)),
                                algos.get(ti).name(),
                                Math.round(ms[0] * 1e6)));
                    }
                }
                if (!checked) {
                    check(s, world);
                    checked = true;
                }
                return null;
            });
        }
        return samples;
    }

    private Algorithm algorithmFor(long bytes) {
        if (config.allreduce() != Allreduce.Custom) {
            return Algorithm.NCCL;
        }
        AlgorithmTable t = config.table();
        return t.covers(bytes) ? t.select(bytes) : Algorithm.NCCL;
    }

    /** Every rank reduced the same P: the output must be worldSize x P (bf16 rounding aside). */
    private void check(RankState s, int world) {
        int n = 8;
        short[] p = new short[n];
        short[] o = new short[n];
        Cuda.check(cuMemcpyDtoH(Pointer.to(p), s.p, 2L * n), "read P");
        Cuda.check(cuMemcpyDtoH(Pointer.to(o), s.o, 2L * n), "read output");
        for (int i = 0; i < n; i++) {
            float pv = Float.intBitsToFloat((p[i] & 0xffff) << 16);
            float ov = Float.intBitsToFloat((o[i] & 0xffff) << 16);
            float want = world * pv;
            if (!(pv != 0) || Math.abs(ov - want) > 0.02f * Math.abs(want)) {
                throw new IllegalStateException("serve self-check failed: element " + i + " of the allreduce is " + ov
                        + ", expected " + world + " x " + pv + " = " + want);
            }
        }
        out.printf(
                "serve: first-step check passed (allreduce output = %d x partial, e.g. %s)%n",
                world, Float.intBitsToFloat((o[0] & 0xffff) << 16));
        out.flush();
    }

    @Override
    public void close() {
        if (comm != null) {
            try {
                comm.onEachRank(r -> {
                    RankState s = states.get(r.index());
                    if (s != null) {
                        if (s.gemm != null) {
                            s.gemm.close();
                        }
                        if (s.start != null) {
                            for (int i = 0; i < s.start.length; i++) {
                                cuEventDestroy(s.start[i]);
                                cuEventDestroy(s.end[i]);
                            }
                        }
                        s.allocations.forEach(p -> cuMemFree(p));
                    }
                    return null;
                });
            } finally {
                if (nccl != null) {
                    nccl.close();
                }
                comm.close();
            }
        }
        if (pool != null) {
            pool.close();
        }
    }
}
