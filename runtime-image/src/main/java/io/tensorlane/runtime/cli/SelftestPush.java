package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.CapturedGraph;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.engine.Rank;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * Selftest's check of OneStage's push variant ({@code tl_push.cuh}) against OneStage pulling, on the same inputs: the
 * pull result of the largest count the push variant takes is the reference; then a run of back-to-back push calls of
 * different counts (so different grids, both phases, no host synchronisation between them), eager and captured in a
 * CUDA graph replayed twice, each writing its own slice of one output. Every slice must equal the reference's prefix
 * bit for bit (a zero may differ in sign: an all -0.0 column sums to +0.0 when pushed), on every rank, with the bytes
 * after each slice untouched, and the reference must be within the fp64 bound. A tenth of the inputs are -0.0 (the
 * push buffer's "not arrived" pattern), on every rank in some columns.
 */
final class SelftestPush {
    private static final int GUARD = 64;
    private static final int GRAPH_REPLAYS = 2;

    private final Communicator comm;
    private final List<CUdeviceptr> ins;
    private final long seed;

    private SelftestPush(Communicator comm, List<CUdeviceptr> ins, long seed) {
        this.comm = comm;
        this.ins = ins;
        this.seed = seed;
    }

    /** One result per (dtype, eager | graph); nothing on one rank. Leaves the communicator's push setting as it was. */
    static List<SelftestRunner.Result> run(Communicator comm, List<CUdeviceptr> ins, List<DType> dtypes, long seed) {
        List<SelftestRunner.Result> results = new ArrayList<>();
        if (comm.worldSize() < 2) {
            return results;
        }
        boolean was = comm.push();
        try {
            SelftestPush t = new SelftestPush(comm, ins, seed);
            for (DType d : dtypes) {
                if (d == DType.fp32) {
                    continue; // the push variant's element types: bf16, fp16
                }
                results.add(t.check(d, false));
                results.add(t.check(d, true));
            }
        } finally {
            comm.setPush(was);
        }
        return results;
    }

    /** Counts of one run of calls: whole packs, 1 to many blocks, the largest the push variant takes. */
    static List<Long> counts(long maxCount) {
        List<Long> cs = new ArrayList<>();
        for (long c : new long[] {8, 4096, 520, 21_504, 8, 65_536, 4104, 131_072}) {
            if (c <= maxCount) {
                cs.add(c);
            }
        }
        cs.add(maxCount);
        return cs;
    }

    private SelftestRunner.Result check(DType dtype, boolean graph) {
        int world = comm.worldSize();
        long max = comm.layout().pushSlotBytes() / dtype.bytes();
        List<Long> counts = counts(max);
        long caseSeed = seed ^ ((long) dtype.ordinal() << 40) ^ System.nanoTime();
        List<byte[]> inputs = IntStream.range(0, world)
                .mapToObj(r -> withNegativeZeros(HostTensors.random(dtype, max, caseSeed + r * 7919L), r))
                .toList();
        long refBytes = max * dtype.bytes();
        long sliceBytes = refBytes + GUARD; // a multiple of 16: every slice stays 16-byte aligned
        long outBytes = sliceBytes * counts.size();
        List<CUdeviceptr> refs = comm.onEachRank(r -> SelftestRunner.alloc(refBytes));
        List<CUdeviceptr> outs = comm.onEachRank(r -> SelftestRunner.alloc(outBytes));
        List<CapturedGraph> graphs = new ArrayList<>();
        List<byte[][]> got;
        List<Long> before = SelftestRunner.pushCalls(comm); // the reference must not push, the run must, every call
        List<Long> after;
        try {
            comm.setPush(false);
            comm.onEachRank(r -> {
                int i = r.index();
                Cuda.check(cuMemcpyHtoD(ins.get(i), Pointer.to(inputs.get(i)), refBytes), "upload input");
                Cuda.check(cuMemsetD8(outs.get(i), (byte) 0xFF, outBytes), "poison outputs");
                r.allReduce(ins.get(i), refs.get(i), max, dtype, r.stream(), Algorithm.OneStage);
                r.synchronize();
                return null;
            });
            comm.setPush(true);
            if (graph) {
                graphs.addAll(comm.onEachRank(
                        r -> CapturedGraph.capture(r.stream(), () -> calls(r, dtype, counts, outs, sliceBytes))));
            }
            comm.onEachRank(r -> {
                if (graph) {
                    for (int k = 0; k < GRAPH_REPLAYS; k++) {
                        graphs.get(r.index()).launch(r.stream());
                    }
                } else {
                    calls(r, dtype, counts, outs, sliceBytes);
                }
                r.synchronize();
                return null;
            });
            after = SelftestRunner.pushCalls(comm);
            got = comm.onEachRank(r ->
                    new byte[][] {download(refs.get(r.index()), refBytes), download(outs.get(r.index()), outBytes)});
        } finally {
            comm.onEachRank(r -> {
                if (!graphs.isEmpty()) {
                    graphs.get(r.index()).close();
                }
                cuMemFree(refs.get(r.index()));
                cuMemFree(outs.get(r.index()));
                return null;
            });
        }
        byte[] reference = got.get(0)[0];
        boolean equal = true;
        boolean tail = true;
        for (byte[][] g : got) {
            equal &= Arrays.equals(g[0], reference);
            for (int j = 0; j < counts.size(); j++) {
                int at = (int) (j * sliceBytes);
                int bytes = (int) (counts.get(j) * dtype.bytes());
                equal &= sameUpToZeroSign(Arrays.copyOfRange(g[1], at, at + bytes), reference, counts.get(j));
                for (int k = at + bytes; k < at + sliceBytes; k++) {
                    tail &= g[1][k] == (byte) 0xFF;
                }
            }
        }
        double[] result = HostTensors.decode(reference, dtype);
        double err = HostTensors.relativeError(result, HostTensors.reference(inputs, dtype));
        double tol = HostTensors.tolerance(dtype);
        long violations = HostTensors.boundViolations(result, inputs, dtype, 1);
        return SelftestRunner.Result.of(
                        world,
                        dtype.name(),
                        "OneStage-push",
                        (graph ? "graph" : "eager") + " x" + counts.size(),
                        max,
                        err,
                        tol,
                        violations,
                        equal,
                        tail)
                .withPushCalls(before, after, (long) counts.size() * (graph ? GRAPH_REPLAYS : 1));
    }

    /** The run of calls on one rank: call j reduces the first counts[j] inputs into slice j of the output. */
    private void calls(Rank r, DType dtype, List<Long> counts, List<CUdeviceptr> outs, long sliceBytes) {
        for (int j = 0; j < counts.size(); j++) {
            CUdeviceptr slice = outs.get(r.index()).withByteOffset(j * sliceBytes);
            r.allReduce(ins.get(r.index()), slice, counts.get(j), dtype, r.stream(), Algorithm.OneStage);
        }
    }

    /** Every 10th element -0.0; on rank 0 also every 7th, so some columns are -0.0 on every rank and some on one. */
    static byte[] withNegativeZeros(byte[] raw, int rank) {
        for (int i = 0; i < raw.length / 2; i++) {
            if (i % 10 == 3 || (rank == 0 && i % 7 == 1)) {
                raw[2 * i] = 0;
                raw[2 * i + 1] = (byte) 0x80; // little-endian 0x8000
            }
        }
        return raw;
    }

    /** Bitwise equal in the first {@code count} 16-bit elements, except that +0.0 and -0.0 count as equal. */
    static boolean sameUpToZeroSign(byte[] a, byte[] b, long count) {
        for (int i = 0; i < count; i++) {
            int x = (a[2 * i] & 0xFF) | (a[2 * i + 1] & 0xFF) << 8;
            int y = (b[2 * i] & 0xFF) | (b[2 * i + 1] & 0xFF) << 8;
            if (x != y && ((x & 0x7FFF) != 0 || (y & 0x7FFF) != 0)) {
                return false;
            }
        }
        return true;
    }

    private static byte[] download(CUdeviceptr p, long bytes) {
        byte[] b = new byte[(int) bytes];
        Cuda.check(cuMemcpyDtoH(Pointer.to(b), p, bytes), "download");
        return b;
    }
}
