package io.tensorlane.runtime.cli;

import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Communicator;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.FusedNorm;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.engine.Rank;
import io.tensorlane.runtime.llm.ModelKernels;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * Selftest's check of the allreduce fused with the residual add + RMSNorm ({@link FusedNorm}): on fresh random partial
 * sums, residual and weight, every rank runs OneStage followed by the model's add + RMSNorm kernel, then the fused
 * kernel on the same inputs; the residual and the normalized rows must be bitwise equal between the two and between
 * the ranks, the rows close to an fp64 reference, and the bytes after the output untouched. Row lengths cover the
 * kernel's register part and its re-read part (hidden above 2,048) up to its 32 KiB shared-memory limit.
 */
final class SelftestFusedNorm {
    private static final int GUARD = 64;
    private static final float EPS = 1e-5f;
    private static final int[] HIDDEN = {256, 4096, 8192, 16384};
    private static final int[] ROWS = {1, 3, FusedNorm.MAX_ROWS};

    private final Communicator comm;
    private final List<CUdeviceptr> ins;
    private final List<CUdeviceptr> outs;
    private final long seed;

    private SelftestFusedNorm(Communicator comm, List<CUdeviceptr> ins, List<CUdeviceptr> outs, long seed) {
        this.comm = comm;
        this.ins = ins;
        this.outs = outs;
        this.seed = seed;
    }

    /**
     * Every case on the communicator's ranks, with {@code ins} as the partial sums (registered or not: {@code mode}
     * names which path the input takes) and {@code outs} as OneStage's output. A case the plan's table routes to
     * another algorithm is skipped with a line in {@code log}.
     */
    static List<SelftestRunner.Result> run(
            Communicator comm,
            List<CUdeviceptr> ins,
            List<CUdeviceptr> outs,
            List<DType> dtypes,
            long seed,
            String mode,
            PrintWriter log) {
        SelftestFusedNorm t = new SelftestFusedNorm(comm, ins, outs, seed);
        List<SelftestRunner.Result> results = new ArrayList<>();
        for (DType d : dtypes) {
            if (d == DType.fp32) {
                continue; // the model's element types only
            }
            for (int hidden : HIDDEN) {
                for (int rows : ROWS) {
                    FusedNorm probe = new FusedNorm(rows, hidden, d, 0, 0, 0, EPS, rows == 3 ? 0 : 1);
                    if (comm.onEachRank(r -> r.fits(probe)).contains(false)) {
                        // the plan's table sends this message elsewhere: the engine would not fuse it either
                        log.printf(
                                "skip ws=%d %s FusedNorm %s h=%d rows=%d: routed to %s%n",
                                comm.worldSize(), d, mode, hidden, rows, comm.route(probe.bytes()));
                        continue;
                    }
                    results.add(t.check(d, rows, hidden, probe.mode(), mode));
                }
            }
        }
        return results;
    }

    private SelftestRunner.Result check(DType dtype, int rows, int hidden, int normMode, String mode) {
        int world = comm.worldSize();
        long count = (long) rows * hidden;
        long bytes = count * dtype.bytes();
        String label = mode + " h=" + hidden + " m" + normMode;
        long caseSeed = seed ^ (count * 0x9E3779B97F4A7C15L) ^ ((long) dtype.ordinal() << 40) ^ System.nanoTime();
        List<byte[]> partials = IntStream.range(0, world)
                .mapToObj(r -> HostTensors.random(dtype, count, caseSeed + r * 7919L))
                .toList();
        float[] residual0 = new float[(int) count];
        SplittableRandom rnd = new SplittableRandom(caseSeed ^ 0x5DEECE66DL);
        for (int i = 0; i < residual0.length; i++) {
            residual0[i] = (float) (rnd.nextDouble() * 4 - 2);
        }
        byte[] weight = HostTensors.random(dtype, hidden, caseSeed ^ 0xABCDEFL);
        // per rank: [residual apart, residual fused, out apart, out fused] as host bytes
        List<Long> before = SelftestRunner.pushCalls(comm);
        List<byte[][]> got =
                comm.onEachRank(r -> runOnRank(r, dtype, rows, hidden, normMode, partials, residual0, weight));
        // with push on, OneStage apart and the fused kernel both take the push variant: the comparison is of those two
        long pushes = comm.pushes(dtype, count) ? 2 : 0;
        boolean equal = true;
        boolean tail = true;
        for (byte[][] g : got) {
            equal &= Arrays.equals(g[0], g[1]) && Arrays.equals(g[0], got.get(0)[0]);
            equal &= Arrays.equals(g[2], 0, (int) bytes, g[3], 0, (int) bytes)
                    && Arrays.equals(g[2], 0, (int) bytes, got.get(0)[2], 0, (int) bytes);
            for (byte[] o : new byte[][] {g[2], g[3]}) {
                for (int k = (int) bytes; k < o.length; k++) {
                    tail &= o[k] == (byte) 0xFF;
                }
            }
        }
        double[] outFused = HostTensors.decode(Arrays.copyOf(got.get(0)[3], (int) bytes), dtype);
        double err = HostTensors.relativeError(
                outFused, reference(partials, residual0, weight, dtype, rows, hidden, normMode));
        double tol = HostTensors.tolerance(dtype);
        long violations = boundViolations(outFused, partials, residual0, weight, dtype, rows, hidden, normMode);
        return SelftestRunner.Result.of(
                        world, dtype.name(), "FusedNorm", label, count, err, tol, violations, equal, tail)
                .withPushCalls(before, SelftestRunner.pushCalls(comm), pushes);
    }

    private byte[][] runOnRank(
            Rank r,
            DType dtype,
            int rows,
            int hidden,
            int normMode,
            List<byte[]> partials,
            float[] residual0,
            byte[] weight) {
        int i = r.index();
        long count = (long) rows * hidden;
        long bytes = count * dtype.bytes();
        long resBytes = 4 * count;
        CUdeviceptr resA = SelftestRunner.alloc(resBytes);
        CUdeviceptr resB = SelftestRunner.alloc(resBytes);
        CUdeviceptr outA = SelftestRunner.alloc(bytes + GUARD);
        CUdeviceptr outB = SelftestRunner.alloc(bytes + GUARD);
        CUdeviceptr w = SelftestRunner.alloc(weight.length);
        try (ModelKernels kernels = new ModelKernels()) {
            Cuda.check(cuMemcpyHtoD(ins.get(i), Pointer.to(partials.get(i)), bytes), "upload partial sums");
            Cuda.check(cuMemcpyHtoD(resA, Pointer.to(residual0), resBytes), "upload residual");
            Cuda.check(cuMemcpyHtoD(resB, Pointer.to(residual0), resBytes), "upload residual");
            Cuda.check(cuMemcpyHtoD(w, Pointer.to(weight), weight.length), "upload weight");
            Cuda.check(cuMemsetD8(outA, (byte) 0xFF, bytes + GUARD), "poison output");
            Cuda.check(cuMemsetD8(outB, (byte) 0xFF, bytes + GUARD), "poison output");
            var s = r.stream();
            r.allReduce(ins.get(i), outs.get(i), count, dtype, s, Algorithm.OneStage);
            kernels.addRmsNorm(
                    dtype,
                    Cuda.address(resA),
                    Cuda.address(outs.get(i)),
                    Cuda.address(w),
                    Cuda.address(outA),
                    rows,
                    hidden,
                    EPS,
                    normMode,
                    s);
            r.allReduceAddRmsNorm(
                    ins.get(i),
                    new FusedNorm(
                            rows,
                            hidden,
                            dtype,
                            Cuda.address(resB),
                            Cuda.address(w),
                            Cuda.address(outB),
                            EPS,
                            normMode),
                    s);
            r.synchronize();
            return new byte[][] {
                download(resA, resBytes),
                download(resB, resBytes),
                download(outA, bytes + GUARD),
                download(outB, bytes + GUARD)
            };
        } finally {
            for (CUdeviceptr p : List.of(resA, resB, outA, outB, w)) {
                cuMemFree(p);
            }
        }
    }

    private static byte[] download(CUdeviceptr p, long bytes) {
        byte[] b = new byte[(int) bytes];
        Cuda.check(cuMemcpyDtoH(Pointer.to(b), p, bytes), "download");
        return b;
    }

    /** fp64: residual (mode 1: plus the start) + the ranks' sum, normalized per row and scaled by the weight. */
    static double[] reference(
            List<byte[]> partials, float[] residual0, byte[] weight, DType dtype, int rows, int hidden, int normMode) {
        double[] sum = HostTensors.reference(partials, dtype);
        double[] w = HostTensors.decode(weight, dtype);
        double[] out = new double[rows * hidden];
        for (int row = 0; row < rows; row++) {
            double[] r = new double[hidden];
            double ss = 0;
            for (int j = 0; j < hidden; j++) {
                int k = row * hidden + j;
                r[j] = (normMode == 0 ? 0 : residual0[k]) + sum[k];
                ss += r[j] * r[j];
            }
            double inv = 1 / Math.sqrt(ss / hidden + EPS);
            for (int j = 0; j < hidden; j++) {
                out[row * hidden + j] = w[j] * r[j] * inv;
            }
        }
        return out;
    }

    /**
     * Output elements outside the forward-error bound of the computation, element by element: the ranks' sum rounded
     * once to the element type after fp32 accumulation (at most (u + world * 2^-24) * sum_r |x_r| per element, u the
     * type's unit roundoff, as {@link HostTensors#boundViolations}) and the fp32 add to the residual propagate to the
     * output through the weight and the row's 1/rms; the 1/rms itself moves by at most sum_j |r_j| e_j / sum_j r_j^2
     * (e_j the element's error) plus the fp32 sum of squares over the row; the output is rounded once more. 25% slack.
     */
    static long boundViolations(
            double[] got,
            List<byte[]> partials,
            float[] residual0,
            byte[] weight,
            DType dtype,
            int rows,
            int hidden,
            int normMode) {
        double u = HostTensors.unitRoundoff(dtype);
        double perAbs = u + partials.size() * 0x1p-24;
        double slack = dtype == DType.fp16 ? 0x1p-25 : 0; // fp16 subnormal spacing
        double[] sum = HostTensors.reference(partials, dtype);
        double[] abs = new double[sum.length];
        for (byte[] in : partials) {
            double[] x = HostTensors.decode(in, dtype);
            for (int i = 0; i < abs.length; i++) {
                abs[i] += Math.abs(x[i]);
            }
        }
        double[] w = HostTensors.decode(weight, dtype);
        long bad = 0;
        for (int row = 0; row < rows; row++) {
            double[] r = new double[hidden];
            double[] e = new double[hidden];
            double ss = 0;
            double moved = 0;
            for (int j = 0; j < hidden; j++) {
                int k = row * hidden + j;
                r[j] = (normMode == 0 ? 0 : residual0[k]) + sum[k];
                e[j] = perAbs * abs[k] + 0x1p-24 * Math.abs(r[j]);
                ss += r[j] * r[j];
                moved += Math.abs(r[j]) * e[j];
            }
            double inv = 1 / Math.sqrt(ss / hidden + EPS);
            double rho = moved / (ss + EPS * hidden) + 0.5 * hidden * 0x1p-24;
            for (int j = 0; j < hidden; j++) {
                double ref = w[j] * r[j] * inv;
                double bound = (u + 3 * 0x1p-24 + rho) * Math.abs(ref) + Math.abs(w[j]) * inv * e[j];
                if (!(Math.abs(got[row * hidden + j] - ref) <= 1.25 * bound + slack)) {
                    bad++;
                }
            }
        }
        return bad;
    }
}
