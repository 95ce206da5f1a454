package io.tensorlane.runtime.llm;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.FusedNorm;
import io.tensorlane.runtime.engine.Rank;
import jcuda.driver.CUdeviceptr;

/**
 * One rank's allreduces in the forward pass ({@link RankModel}): a layer's partial sums reduced over the ranks and
 * added to the residual stream with the next RMSNorm, and the allreduce of the gathered logits; rank 0's allreduce
 * timer times them while a timed pass is on.
 */
final class RankReduce {
    private final Rank rank;
    private final int tp;
    private final boolean fusedNorm;
    private final ModelKernels kernels;
    private final DType dt;
    private final int hidden;
    private final CUdeviceptr part;
    private final CUdeviceptr red;
    private final long residual;
    private final long xn;
    /** Rank 0's allreduce timer (null: none); it records only while a timed pass is on. */
    private AllreduceTimer timer;

    /**
     * {@code part}: the layer's partial sums [t, hidden]; {@code red}: their reduced copy (part itself on one rank);
     * {@code residual} fp32 and {@code xn} (the normed rows) [t, hidden].
     */
    RankReduce(
            Rank rank,
            int tp,
            boolean fusedNorm,
            ModelKernels kernels,
            DType dt,
            int hidden,
            CUdeviceptr part,
            CUdeviceptr red,
            long residual,
            long xn) {
        this.rank = rank;
        this.tp = tp;
        this.fusedNorm = fusedNorm;
        this.kernels = kernels;
        this.dt = dt;
        this.hidden = hidden;
        this.part = part;
        this.red = red;
        this.residual = residual;
        this.xn = xn;
    }

    /**
     * The layer's partial sums in {@code part} reduced over the ranks, then added to the residual stream ({@code mode}
     * 1; 0 starts it) and normalized with the weight {@code norm} into {@code xn}: one fused kernel where it fits
     * ({@link FusedNorm#fits}: OneStage's messages of at most 8 tokens on two or more ranks), else the allreduce and
     * the norm kernel apart. The same bits either way. The allreduce timer times the fused kernel as the allreduce it
     * stands for.
     */
    void andNorm(int n, long norm, int mode, float eps, MlpBlock.OpMarks mark) {
        var s = rank.stream();
        FusedNorm f = fusedNorm && tp > 1 ? new FusedNorm(n, hidden, dt, residual, norm, xn, eps, mode) : null;
        if (f != null && rank.fits(f)) {
            timed(Algorithm.OneStage, () -> rank.allReduceAddRmsNorm(part, f, s));
            mark.mark("allreduce+norm");
            return;
        }
        long delta = Cuda.address(part);
        if (tp > 1) {
            allReduce(part, red, (long) n * hidden, dt);
            mark.mark("allreduce");
            delta = Cuda.address(red);
        }
        kernels.addRmsNorm(dt, residual, delta, norm, xn, n, hidden, eps, mode, s);
        mark.mark("norm");
    }

    /** The rank's allreduce with the table's algorithm. */
    void allReduce(CUdeviceptr in, CUdeviceptr out, long count, DType type) {
        Algorithm a = rank.route(count * type.bytes());
        timed(a, () -> rank.allReduce(in, out, count, type, rank.stream(), a));
    }

    /** Enqueues {@code call}, an allreduce taking {@code a}, between the timer's events when a timed pass is on. */
    private void timed(Algorithm a, Runnable call) {
        var s = rank.stream();
        AllreduceTimer t = timer;
        boolean on = t != null && t.on();
        if (on) {
            t.before(s);
        }
        call.run();
        if (on) {
            t.after(a, s);
        }
    }

    /** Rank 0: the timer its allreduces report to (see {@link AllreduceTimer}). */
    void timeWith(AllreduceTimer t) {
        timer = t;
    }
}
