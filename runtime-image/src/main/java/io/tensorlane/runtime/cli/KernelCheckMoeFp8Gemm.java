package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.compareLinear;
import static io.tensorlane.runtime.cli.KernelCheckMath.encode;
import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.poisonBroken;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.cli.KernelCheckCommand.Result;
import io.tensorlane.runtime.cli.KernelCheckMath.Stat;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.CublasLt;
import io.tensorlane.runtime.llm.Fp8ExpertGemm;
import io.tensorlane.runtime.llm.Fp8Kernels;
import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.model.Fp8;
import io.tensorlane.runtime.model.WeightType;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s cases of the grouped FP8 GEMM of long MoE steps (tl_moe_gemm_fp8.cuh, {@link Fp8ExpertGemm}):
 * rows grouped by expert as the engine groups them (experts with no rows, one, a tile's worth and one more, several
 * tiles), the rows quantized by tl_quant_fp8, the tiles made by {@link Fp8ExpertGemm#tiles}; against fp64 on the same
 * codes and scales, expert by expert, for every FP8 scale layout (a kernel that reads another expert's rows or scales,
 * the wrong block or the wrong tile fails); guard bytes after the output.
 */
final class KernelCheckMoeFp8Gemm {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;
    private final PrintWriter out;
    private final Consumer<Result> results;
    private final KernelCheckFp8 fp8;

    KernelCheckMoeFp8Gemm(
            ModelKernels k,
            CUstream stream,
            SplittableRandom rnd,
            Runnable sync,
            PrintWriter out,
            Consumer<Result> results,
            KernelCheckFp8 fp8) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
        this.out = out;
        this.results = results;
        this.fp8 = fp8;
    }

    void all(DType t, KernelCheckFp8.Guard guard) {
        if (!Fp8Kernels.tensorCoresHere()) {
            out.println("  moe_gemm_fp8 " + t + ": not run (this GPU has no FP8 tensor cores; the engine dequantizes)");
            return;
        }
        // {experts, in, out}: small; Qwen3-30B-A3B's gate/up at TP 2 (hidden 2048 -> 2 x 384) and its down (384 ->
        // 2048, 16 output tiles); 3 column tiles of 128
        int[][] shapes = {{8, 256, 256}, {4, 2048, 768}, {6, 384, 2048}, {5, 128, 384}};
        for (WeightType type : WeightType.values()) {
            if (!type.fp8()) {
                continue;
            }
            for (int[] sh : shapes) {
                String nm = type.name().toLowerCase(Locale.ROOT) + ",E=" + sh[0] + ",in=" + sh[1] + ",out=" + sh[2];
                guard.run("moe_gemm_fp8", t, nm, () -> gemmCase(t, type, sh[0], sh[1], sh[2], nm));
            }
        }
    }

    /** Rows per expert: none, one, a tile less one, a tile, a tile and one, two tiles and two, then random. */
    private int[] counts(int experts) {
        int[] fixed = {0, 1, 63, 64, 65, 130};
        int[] c = new int[experts];
        for (int e = 0; e < experts; e++) {
            c[e] = e < fixed.length ? fixed[(e + 1) % fixed.length] : 1 + rnd.nextInt(100);
        }
        return c;
    }

    void gemmCase(DType t, WeightType type, int experts, int in, int outCols, String name) {
        int[] counts = counts(experts);
        int[] offsets = new int[experts + 1];
        for (int e = 0; e < experts; e++) {
            offsets[e + 1] = offsets[e] + counts[e];
        }
        int rows = offsets[experts];
        double[] xv = new double[rows * in];
        for (int i = 0; i < xv.length; i++) {
            // several binades and some zeros: each row's per-128 scales differ
            xv[i] = rnd.nextInt(16) == 0 ? 0 : (rnd.nextDouble() * 2 - 1) * Math.scalb(1.0, rnd.nextInt(6) - 3);
        }
        byte[] x = encode(t, xv);
        byte[] w = fp8.codes(experts * outCols * in);
        float[] s = fp8.scales(type, experts * outCols, in);
        int[] table = new int[4 * Fp8ExpertGemm.tileCapacity(rows, experts)];
        int count = Fp8ExpertGemm.tiles(offsets, experts, table);
        int groups = in / CublasLt.Fp8Scaling.GROUP;
        int outBytes = rows * outCols * t.bytes();
        int guard = 64;
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(x);
            long dW = a.upload(w);
            long dS = a.upload(floats(s));
            long dTiles = a.upload(ints(Arrays.copyOf(table, 4 * count)));
            long dQ = a.alloc((long) rows * in);
            long dXs = a.alloc(4L * groups * rows);
            long dY = a.poisoned(outBytes + guard);
            k.fp8().quantize(t, dX, dQ, dXs, rows, rows, in, CublasLt.Fp8Scaling.GROUP, stream);
            k.moe().groupedFp8(t, type, dQ, dXs, rows, dW, dS, dTiles, count, dY, in, outCols, stream);
            sync.run();
            // the reference: the operands as the GEMM got them (codes times scales), in double, expert by expert
            byte[] q = a.download(dQ, rows * in);
            float[] xs = new float[groups * rows];
            ByteBuffer.wrap(a.download(dXs, 4 * groups * rows))
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .asFloatBuffer()
                    .get(xs);
            double[] wd = Fp8.dequantize(w, s, type, experts * outCols, in);
            byte[] raw = a.download(dY, outBytes + guard);
            double[] got = HostTensors.decode(Arrays.copyOf(raw, outBytes), t);
            double maxAbs = 0;
            double maxRel = 0;
            long bad = poisonBroken(raw, outBytes, guard);
            for (int e = 0; e < experts; e++) {
                int n = counts[e];
                if (n == 0) {
                    continue;
                }
                double[] xq = new double[n * in];
                for (int r = 0; r < n; r++) {
                    int row = offsets[e] + r;
                    for (int c = 0; c < in; c++) {
                        xq[r * in + c] =
                                (double) Fp8.decode(q[row * in + c]) * xs[(c / CublasLt.Fp8Scaling.GROUP) * rows + row];
                    }
                }
                double[] we = Arrays.copyOfRange(wd, e * outCols * in, (e + 1) * outCols * in);
                double[] ge = Arrays.copyOfRange(got, offsets[e] * outCols, offsets[e + 1] * outCols);
                // the FP8 MMA's 128-deep chunks keep ~14 bits (as cuBLASLt's, KernelCheckFp8Gemm): 2^-10 of the
                // products' absolute sum; a wrong scale, block, expert or row is off by far more
                Stat st = compareLinear(ge, xq, we, n, in, outCols, HostTensors.unitRoundoff(t), 0x1p-10);
                maxAbs = Math.max(maxAbs, st.maxAbs());
                maxRel = Math.max(maxRel, st.maxRel());
                bad += st.bad();
            }
            results.accept(Result.of("moe_gemm_fp8", t, name, new Stat(maxAbs, maxRel, bad)));
        }
    }
}
