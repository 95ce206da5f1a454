package io.tensorlane.runtime.engine;

import static io.tensorlane.runtime.engine.KernelArgs.f;
import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.l;
import static io.tensorlane.runtime.engine.KernelArgs.p;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import jcuda.Pointer;

/**
 * One call of the allreduce fused with the model's residual add + RMSNorm ({@code tl_allreduce_rmsnorm_<dtype>},
 * tl_allreduce.cuh): every rank's {@code rows x hidden} partial sums are reduced as OneStage reduces them (fp32 in rank
 * order, rounded to the element type), then each reduced row is added to the fp32 residual stream ({@code mode} 1) or
 * starts it ({@code mode} 0) and normalized into {@code out} with {@code weight}, by the same device code as the
 * model's add + RMSNorm kernel: the same bits as the two apart, one kernel and one pass less over the row.
 *
 * @param rows     tokens of the step
 * @param hidden   elements per row
 * @param dtype    element type of the inputs, weight and out (bf16 or fp16)
 * @param residual device address of the fp32 residual [rows, hidden] (read and written)
 * @param weight   device address of the norm's weight [hidden]
 * @param out      device address of the normalized rows [rows, hidden]
 * @param eps      the norm's epsilon
 * @param mode     0: residual = reduced row; 1: residual += reduced row
 */
public record FusedNorm(int rows, int hidden, DType dtype, long residual, long weight, long out, float eps, int mode) {
    /**
     * The longest row the kernel stages in shared memory (bytes): 16,384 elements of bf16. The block's static shared
     * memory comes on top, and the whole must stay within the 48 KiB a block gets without opting in.
     */
    public static final int MAX_ROW_BYTES = 32 * 1024;

    public FusedNorm {
        if (rows < 1 || hidden < 1) {
            throw new IllegalArgumentException("rows and hidden must be >= 1, got " + rows + " x " + hidden);
        }
        if (mode != 0 && mode != 1) {
            throw new IllegalArgumentException("mode must be 0 (residual = sum) or 1 (residual += sum), got " + mode);
        }
    }

    /**
     * The most rows (tokens of the step) the fused kernel takes. It runs one block per row, each reducing its row then
     * normalizing it; on the 8B geometry at TP 2 (two virtual ranks on one H200, 2026-12-01) a decode step took 4.99
     * against 5.00-5.03 ms of GPU time at batch 1 and 5.91 against 6.02-6.07 ms at batch 8, but 7.06 against 6.94-6.96
     * at batch 32, where OneStage's own grid and the norm kernel apart were faster.
     */
    public static final int MAX_ROWS = 8;

    /**
     * Whether the fused kernel can stand for the allreduce the table routes to {@code routed} plus the norm: more than
     * one rank, the message on OneStage (TwoStage, Ring and NCCL keep their own kernels), at most {@link #MAX_ROWS}
     * rows, a model element type, rows of whole 16-byte packs that fit in shared memory.
     */
    public static boolean fits(int world, Algorithm routed, DType dtype, int rows, int hidden) {
        return world > 1
                && routed == Algorithm.OneStage
                && rows <= MAX_ROWS
                && dtype != DType.fp32
                && hidden % dtype.elementsPerVector() == 0
                && (long) hidden * dtype.bytes() <= MAX_ROW_BYTES;
    }

    /** Elements of the message: rows x hidden. */
    public long count() {
        return (long) rows * hidden;
    }

    /** The message: every rank's partial rows. */
    public long bytes() {
        return Math.multiplyExact(count(), (long) dtype.bytes());
    }

    /** Dynamic shared memory of one block: the reduced row in the element type. */
    int sharedBytes() {
        return hidden * dtype.bytes();
    }

    /** The kernel's parameters, in the order of {@code TL_NORM_ENTRY} in tl_allreduce.cu. */
    Pointer params(KernelTables t, int rank, int world, long timeoutNanos) {
        return Pointer.to(
                p(t.inputs()),
                p(t.rankData()),
                p(t.state()),
                p(t.errorRecord()),
                i(rank),
                i(world),
                l(timeoutNanos),
                p(residual),
                p(weight),
                p(out),
                i(rows),
                i(hidden),
                f(eps),
                i(mode));
    }
}
