package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.CapturedGraph;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.CommunicatorConfig;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.nccl.Nccl;
import io.tensorlane.runtime.nccl.NcclComm;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/** The GPU part of selftest: every case on fresh random inputs, poisoned outputs, fp64 reference, bitwise-equal ranks. */
final class SelftestRunner {
    /** One checked call. {@code algorithm} null means "selected by the table". */
    record Result(
            int world,
            String dtype,
            String algorithm,
            String mode,
            long count,
            double relErr,
            double tolerance,
            long boundViolations,
            boolean bitwiseEqual,
            boolean tailIntact,
            boolean ok) {
        /** A check that passes when the ranks agree bit for bit, the tail is untouched and both error checks hold. */
        static Result of(
                int world,
                String dtype,
                String algorithm,
                String mode,
                long count,
                double relErr,
                double tolerance,
                long boundViolations,
                boolean bitwiseEqual,
                boolean tailIntact) {
            boolean ok = bitwiseEqual && tailIntact && boundViolations == 0 && relErr <= tolerance;
            return new Result(
                    world,
                    dtype,
                    algorithm,
                    mode,
                    count,
                    relErr,
                    tolerance,
                    boundViolations,
                    bitwiseEqual,
                    tailIntact,
                    ok);
        }

        /**
         * This result, failed (its mode naming the counts) unless every rank's push call counter went from
         * {@code before} to {@code after} by exactly {@code expected}: the check ran the kernel it meant to (the push
         * variant and the pull kernel give the same bits, so the outputs alone cannot tell).
         */
        Result withPushCalls(List<Long> before, List<Long> after, long expected) {
            for (int r = 0; r < before.size(); r++) {
                long ran = after.get(r) - before.get(r);
                if (ran != expected) {
                    return new Result(
                            world,
                            dtype,
                            algorithm,
                            mode + " (rank " + r + ": " + ran + " push calls, expected " + expected + ")",
                            count,
                            relErr,
                            tolerance,
                            boundViolations,
                            bitwiseEqual,
                            tailIntact,
                            false);
                }
            }
            return this;
        }
    }

    /** Every rank's push call counter ({@link Rank#pushCalls}). */
    static List<Long> pushCalls(Communicator comm) {
        return comm.onEachRank(Rank::pushCalls);
    }

    /** Below this many elements ‖out − ref‖/‖ref‖ is dominated by cancellation; the element-wise bound still applies. */
    static final long NORM_CHECK_MIN_COUNT = 1000;

    private static final int GUARD = 64; // bytes after the message that must stay poisoned
    private final Communicator comm;
    private final SelftestPlan plan;
    private final long seed;
    private final PrintWriter out;
    private final List<CUdeviceptr> ins;
    private final List<CUdeviceptr> outs;
    private final long bufBytes;

    private SelftestRunner(Communicator comm, SelftestPlan plan, long seed, PrintWriter out) {
        this.comm = comm;
        this.plan = plan;
        this.seed = seed;
        this.out = out;
        this.bufBytes = comm.layout().maxMessageBytes() + GUARD;
        this.ins = comm.onEachRank(r -> alloc(bufBytes));
        this.outs = comm.onEachRank(r -> alloc(bufBytes));
    }

    static CUdeviceptr alloc(long bytes) {
        CUdeviceptr p = new CUdeviceptr();
        Cuda.check(cuMemAlloc(p, bytes), "cuMemAlloc(" + bytes + ")");
        return p;
    }

    /** The NCCL fallback of a communicator whose ranks are on distinct GPUs, one call per dtype. */
    static List<Result> ncclFallback(
            int world,
            List<Integer> devices,
            SelftestPlan plan,
            long timeoutMs,
            long seed,
            Nccl nccl,
            PrintWriter out) {
        return runWorld(world, devices, plan, timeoutMs, seed, nccl, out);
    }

    /** Runs every case of one world size on {@code devices} (with {@code nccl}: only the NCCL-fallback checks). */
    static List<Result> runWorld(
            int world,
            List<Integer> devices,
            SelftestPlan plan,
            long timeoutMs,
            long seed,
            Nccl nccl,
            PrintWriter out) {
        CommunicatorConfig cfg = new CommunicatorConfig(devices, plan.layout(world), plan.table(world), timeoutMs);
        boolean distinct = !CommunicatorConfig.sharesAGpu(devices);
        try (Communicator comm = Communicator.create(cfg);
                NcclComm fallback = nccl != null && distinct ? new NcclComm(nccl, devices) : null) {
            out.printf("world %d on GPUs %s: %d blocks max per launch%n", world, devices, comm.maxBlocks());
            SelftestRunner t = new SelftestRunner(comm, plan, seed, out);
            try {
                if (fallback != null) {
                    // The communicator's NCCL route: forced per call here; the table or an oversized message takes it
                    // in serve.
                    comm.setFallback(fallback);
                    List<Result> results = new ArrayList<>();
                    for (DType d : plan.dtypes()) {
                        results.add(t.report(t.check(d, 65_537, Algorithm.NCCL, "nccl-fallback", null)));
                    }
                    return results;
                }
                return t.runAll();
            } finally {
                comm.onEachRank(r -> {
                    cuMemFree(t.ins.get(r.index()));
                    cuMemFree(t.outs.get(r.index()));
                    return null;
                });
            }
        }
    }

    private List<Result> runAll() {
        List<Result> results = new ArrayList<>();
        int world = comm.worldSize();
        for (SelftestPlan.Case c : plan.cases(world)) {
            results.add(report(check(c.dtype(), c.count(), c.algorithm(), "eager", null)));
        }
        long mid = Math.min(
                plan.counts().stream().mapToLong(Long::longValue).max().orElseThrow(), 21_504); // 42 KiB of bf16
        for (DType d : plan.dtypes()) {
            results.add(report(check(d, mid, null, "eager-auto", null)));
        }
        // the fused allreduce + RMSNorm with its input copied to staging, then (below) registered
        results.addAll(SelftestFusedNorm.run(comm, ins, outs, plan.dtypes(), seed, "staging", out).stream()
                .map(this::report)
                .toList());
        // OneStage's push variant against OneStage pulling; then the fused one on it against the push + norm apart
        results.addAll(SelftestPush.run(comm, ins, plan.dtypes(), seed).stream()
                .map(this::report)
                .toList());
        comm.setPush(true);
        try {
            results.addAll(SelftestFusedNorm.run(comm, ins, outs, plan.dtypes(), seed, "push", out).stream()
                    .map(this::report)
                    .toList());
        } finally {
            comm.setPush(false);
        }
        // CUDA graph: inputs registered (no staging copy), one captured call per rank, replayed on fresh data twice.
        comm.registerInputs(ins);
        DType d = plan.dtypes().get(0);
        for (Algorithm a : plan.algorithms()) {
            List<CapturedGraph> graphs = comm.onEachRank(r -> CapturedGraph.capture(
                    r.stream(), () -> r.allReduce(ins.get(r.index()), outs.get(r.index()), mid, d, r.stream(), a)));
            try {
                for (int replay = 0; replay < 2; replay++) {
                    results.add(report(check(d, mid, a, "graph", graphs)));
                }
            } finally {
                comm.onEachRank(r -> {
                    graphs.get(r.index()).close();
                    return null;
                });
            }
        }
        results.addAll(SelftestFusedNorm.run(comm, ins, outs, plan.dtypes(), seed, "registered", out).stream()
                .map(this::report)
                .toList());
        return results;
    }

    private Result report(Result r) {
        out.printf(
                "%s ws=%d %-5s %-9s %-10s count=%-8d relerr=%.3e (tol %.0e) bound-violations=%d bitwise=%s tail=%s%n",
                r.ok() ? "ok  " : "FAIL",
                r.world(),
                r.dtype(),
                r.algorithm(),
                r.mode(),
                r.count(),
                r.relErr(),
                r.tolerance(),
                r.boundViolations(),
                r.bitwiseEqual(),
                r.tailIntact());
        out.flush();
        return r;
    }

    private Result check(DType dtype, long count, Algorithm algorithm, String mode, List<CapturedGraph> graphs) {
        int world = comm.worldSize();
        long bytes = count * dtype.bytes();
        long caseSeed = seed ^ (count * 0x9E3779B97F4A7C15L) ^ ((long) dtype.ordinal() << 40) ^ System.nanoTime();
        List<byte[]> inputs = java.util.stream.IntStream.range(0, world)
                .parallel()
                .mapToObj(r -> HostTensors.random(dtype, count, caseSeed + r * 7919L))
                .toList();
        comm.onEachRank(r -> {
            int i = r.index();
            Cuda.check(cuMemcpyHtoD(ins.get(i), Pointer.to(inputs.get(i)), bytes), "upload input");
            // Poison: 0xFF bytes are NaN in fp32, bf16 and fp16, so an unwritten element cannot pass.
            Cuda.check(cuMemsetD8Async(outs.get(i), (byte) 0xFF, bufBytes, r.stream()), "poison output");
            Cuda.check(cuStreamSynchronize(r.stream()), "sync");
            if (graphs != null) {
                graphs.get(i).launch(r.stream());
            } else if (algorithm == null) {
                r.allReduce(ins.get(i), outs.get(i), count, dtype, r.stream());
            } else {
                r.allReduce(ins.get(i), outs.get(i), count, dtype, r.stream(), algorithm);
            }
            r.synchronize();
            return null;
        });
        List<byte[]> got = comm.onEachRank(r -> download(r, bytes + GUARD));
        byte[] first = Arrays.copyOf(got.get(0), (int) bytes);
        boolean equal = true;
        boolean tail = true;
        for (byte[] g : got) {
            equal &= Arrays.equals(first, Arrays.copyOf(g, (int) bytes));
            for (int k = (int) bytes; k < g.length; k++) {
                tail &= g[k] == (byte) 0xFF;
            }
        }
        double[] result = HostTensors.decode(first, dtype);
        double err = HostTensors.relativeError(result, HostTensors.reference(inputs, dtype));
        double tol = HostTensors.tolerance(dtype);
        Algorithm used = algorithm == null ? comm.config().table().select(bytes) : algorithm;
        // Ring (ours and NCCL's) rounds the partial sum at every hop; OneStage/TwoStage round once.
        long violations = HostTensors.boundViolations(
                result, inputs, dtype, used == Algorithm.Ring || used == Algorithm.NCCL ? world : 1);
        boolean normOk = err <= tol || (count < NORM_CHECK_MIN_COUNT && Double.isFinite(err));
        String algoName = algorithm == null ? "Auto:" + used : algorithm.name();
        return new Result(
                world,
                dtype.name(),
                algoName,
                mode,
                count,
                err,
                tol,
                violations,
                equal,
                tail,
                equal && tail && violations == 0 && normOk);
    }

    private byte[] download(Rank r, long bytes) {
        byte[] b = new byte[(int) bytes];
        Cuda.check(cuMemcpyDtoH(Pointer.to(b), outs.get(r.index()), bytes), "download output");
        return b;
    }

    /** Capacity needed for a plan's buffers (the guard included). */
    static long bufferBytes(BufferLayout layout) {
        return layout.maxMessageBytes() + GUARD;
    }
}
