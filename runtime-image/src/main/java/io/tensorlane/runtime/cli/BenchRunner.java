package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.BenchReport.Row;
import io.tensorlane.runtime.engine.CapturedGraph;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.engine.KernelArgs;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.nccl.NcclComm;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import jcuda.Pointer;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/**
 * Timing with CUDA events: warm-up first, then {@code samples} timed batches; a batch is {@code iters} calls (eager)
 * or graph replays of {@value #GRAPH_CALLS} captured calls; the sample is the slowest rank's batch time / calls.
 * Inputs are random data placed in each rank's staging buffer (no copy is timed).
 */
final class BenchRunner {
    static final int GRAPH_CALLS = 10;
    private final Communicator comm;
    private final DType dtype;
    private final int samples;
    private final List<CUdeviceptr> outs;
    private final List<CUevent[]> events;

    BenchRunner(Communicator comm, DType dtype, int samples, long maxBytes, long seed) {
        this.comm = comm;
        this.dtype = dtype;
        this.samples = samples;
        this.outs = comm.onEachRank(r -> SelftestRunner.alloc(maxBytes));
        this.events = comm.onEachRank(r -> {
            CUevent a = new CUevent();
            CUevent b = new CUevent();
            Cuda.check(cuEventCreate(a, CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate");
            Cuda.check(cuEventCreate(b, CUevent_flags.CU_EVENT_DEFAULT), "cuEventCreate");
            byte[] data = HostTensors.random(dtype, maxBytes / dtype.bytes(), seed + r.index() * 104729L);
            Cuda.check(cuMemcpyHtoD(r.staging(), Pointer.to(data), data.length), "fill staging");
            return new CUevent[] {a, b};
        });
    }

    /** Microseconds per call of one timed batch, the slowest rank's; {@code body} enqueues {@code calls} calls. */
    private double batch(int calls, Consumer<Rank> body) {
        List<Float> ms = comm.onEachRank(r -> {
            CUevent[] e = events.get(r.index());
            Cuda.check(cuEventRecord(e[0], r.stream()), "cuEventRecord");
            body.accept(r);
            Cuda.check(cuEventRecord(e[1], r.stream()), "cuEventRecord");
            Cuda.check(cuEventSynchronize(e[1]), "cuEventSynchronize");
            float[] t = {0};
            Cuda.check(cuEventElapsedTime(t, e[0], e[1]), "cuEventElapsedTime");
            return t[0];
        });
        comm.synchronize(); // throws if the watchdog fired
        return ms.stream().mapToDouble(Float::doubleValue).max().orElseThrow() * 1000.0 / calls;
    }

    private Row timed(
            String algo, String mode, long bytes, int callsPerBatch, Consumer<Rank> body, Algorithm forTraffic) {
        batch(callsPerBatch, body); // warm-up
        batch(callsPerBatch, body);
        double[] xs = new double[samples];
        for (int i = 0; i < samples; i++) {
            xs[i] = batch(callsPerBatch, body);
        }
        double med = Traffic.median(xs);
        int world = comm.worldSize();
        double kernel = forTraffic == null ? Double.NaN : Traffic.kernelGBs(forTraffic, world, bytes, med);
        return new Row(
                algo,
                mode,
                world,
                dtype.name(),
                bytes,
                med,
                java.util.Arrays.stream(xs).min().orElseThrow(),
                java.util.Arrays.stream(xs).max().orElseThrow(),
                Traffic.algBw(bytes, med),
                Traffic.busBw(bytes, med, world),
                kernel,
                samples);
    }

    /** Eager: {@code iters} calls launched back to back per batch (launch cost included). */
    Row eager(Algorithm a, long bytes) {
        long count = bytes / dtype.bytes();
        Consumer<Rank> one = r -> r.allReduce(r.staging(), outs.get(r.index()), count, dtype, r.stream(), a);
        double probe = batch(2, r -> {
            one.accept(r);
            one.accept(r);
        });
        int iters = (int) Math.max(2, Math.min(200, Math.round(2000.0 / Math.max(probe, 1e-3))));
        return timed(
                a.name(),
                "eager",
                bytes,
                iters,
                r -> {
                    for (int i = 0; i < iters; i++) {
                        one.accept(r);
                    }
                },
                a);
    }

    /** Graph-replayed: {@value #GRAPH_CALLS} calls captured per rank, replayed. */
    Row graph(Algorithm a, long bytes) {
        long count = bytes / dtype.bytes();
        List<CapturedGraph> graphs = comm.onEachRank(r -> CapturedGraph.capture(r.stream(), () -> {
            for (int i = 0; i < GRAPH_CALLS; i++) {
                r.allReduce(r.staging(), outs.get(r.index()), count, dtype, r.stream(), a);
            }
        }));
        try {
            int replays = 5;
            return timed(
                    a.name(),
                    "graph",
                    bytes,
                    replays * GRAPH_CALLS,
                    r -> {
                        for (int i = 0; i < replays; i++) {
                            graphs.get(r.index()).launch(r.stream());
                        }
                    },
                    a);
        } finally {
            comm.onEachRank(r -> {
                graphs.get(r.index()).close();
                return null;
            });
        }
    }

    /** NCCL over the first {@code nccl.worldSize()} ranks (one per distinct GPU), all driven from rank 0's thread. */
    Row nccl(NcclComm nccl, long bytes) {
        long count = bytes / dtype.bytes();
        int g = nccl.worldSize();
        List<CUdeviceptr> ins = new ArrayList<>();
        List<CUdeviceptr> os = new ArrayList<>();
        List<jcuda.driver.CUstream> ss = new ArrayList<>();
        for (int i = 0; i < g; i++) {
            ins.add(comm.rank(i).staging());
            os.add(outs.get(i));
            ss.add(comm.rank(i).stream());
        }
        Rank r0 = comm.rank(0);
        double[] xs = new double[samples + 2];
        int iters = bytes >= (8 << 20) ? 5 : 50;
        for (int s = 0; s < xs.length; s++) {
            xs[s] = r0.call(() -> {
                CUevent[] e = events.get(0);
                for (int i = 0; i < g; i++) {
                    Cuda.check(cuEventRecord(i == 0 ? e[0] : events.get(i)[0], ss.get(i)), "cuEventRecord");
                }
                for (int k = 0; k < iters; k++) {
                    nccl.allReduceAll(ins, os, count, dtype, ss);
                }
                double worst = 0;
                for (int i = 0; i < g; i++) {
                    CUevent[] ei = events.get(i);
                    Cuda.check(cuEventRecord(ei[1], ss.get(i)), "cuEventRecord");
                    Cuda.check(cuEventSynchronize(ei[1]), "cuEventSynchronize");
                    float[] t = {0};
                    Cuda.check(cuEventElapsedTime(t, ei[0], ei[1]), "cuEventElapsedTime");
                    worst = Math.max(worst, t[0]);
                }
                return worst * 1000.0 / iters;
            });
        }
        double[] timedXs = java.util.Arrays.copyOfRange(xs, 2, xs.length);
        double med = Traffic.median(timedXs);
        return new Row(
                "NCCL",
                "eager",
                g,
                dtype.name(),
                bytes,
                med,
                java.util.Arrays.stream(timedXs).min().orElseThrow(),
                java.util.Arrays.stream(timedXs).max().orElseThrow(),
                Traffic.algBw(bytes, med),
                Traffic.busBw(bytes, med, g),
                Double.NaN,
                samples);
    }

    /** Device copy ceilings on rank 0's GPU: cuMemcpyDtoD and a 16-byte-vector copy kernel; bytes read + written. */
    List<Row> copyCeiling(long bytes) {
        Rank r0 = comm.rank(0);
        return r0.call(() -> {
            CUdeviceptr a = SelftestRunner.alloc(bytes);
            CUdeviceptr b = SelftestRunner.alloc(bytes);
            try {
                byte[] data = HostTensors.random(DType.fp32, Math.min(bytes, 64L << 20) / 4, 42);
                for (long off = 0; off < bytes; off += data.length) {
                    Cuda.check(
                            cuMemcpyHtoD(a.withByteOffset(off), Pointer.to(data), Math.min(data.length, bytes - off)),
                            "fill copy source");
                }
                CUdevice dev = new CUdevice();
                cuDeviceGet(dev, r0.device());
                int[] sms = {0};
                int[] per = {0};
                cuDeviceGetAttribute(sms, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
                cuOccupancyMaxActiveBlocksPerMultiprocessor(
                        per, r0.module().copyKernel(), BufferLayout.THREADS_PER_BLOCK, 0);
                int grid = sms[0] * Math.max(1, per[0]);
                Pointer params = Pointer.to(
                        KernelArgs.p(Cuda.address(a)), KernelArgs.p(Cuda.address(b)), KernelArgs.l(bytes / 16));
                List<Row> rows = new ArrayList<>();
                rows.add(copyRow(
                        "memcpyDtoD",
                        bytes,
                        () -> Cuda.check(cuMemcpyDtoDAsync(b, a, bytes, r0.stream()), "cuMemcpyDtoDAsync")));
                rows.add(copyRow(
                        "copy-kernel",
                        bytes,
                        () -> Cuda.check(
                                cuLaunchKernel(
                                        r0.module().copyKernel(),
                                        grid,
                                        1,
                                        1,
                                        BufferLayout.THREADS_PER_BLOCK,
                                        1,
                                        1,
                                        0,
                                        r0.stream(),
                                        params,
                                        null),
                                "launch copy kernel")));
                return rows;
            } finally {
                cuMemFree(a);
                cuMemFree(b);
            }
        });
    }

    private Row copyRow(String mode, long bytes, Runnable launch) {
        Rank r0 = comm.rank(0);
        CUevent[] e = events.get(0);
        double[] xs = new double[samples];
        for (int s = -2; s < samples; s++) {
            Cuda.check(cuEventRecord(e[0], r0.stream()), "cuEventRecord");
            launch.run();
            Cuda.check(cuEventRecord(e[1], r0.stream()), "cuEventRecord");
            Cuda.check(cuEventSynchronize(e[1]), "cuEventSynchronize");
            float[] t = {0};
            Cuda.check(cuEventElapsedTime(t, e[0], e[1]), "cuEventElapsedTime");
            if (s >= 0) {
                xs[s] = t[0] * 1000.0;
            }
        }
        double med = Traffic.median(xs);
        double gbs = 2.0 * bytes / (med * 1e-6) / 1e9;
        return new Row(
                "copy",
                mode,
                1,
                "bytes",
                bytes,
                med,
                java.util.Arrays.stream(xs).min().orElseThrow(),
                java.util.Arrays.stream(xs).max().orElseThrow(),
                gbs / 2,
                Double.NaN,
                gbs,
                samples);
    }

    void close() {
        comm.onEachRank(r -> {
            cuMemFree(outs.get(r.index()));
            for (CUevent e : events.get(r.index())) {
                cuEventDestroy(e);
            }
            return null;
        });
    }
}
