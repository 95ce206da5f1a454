package io.tensorlane.runtime.llm;

import jcuda.driver.CUstream;

/**
 * The MLP half of one decoder layer on one rank: the normed hidden states xn [n, hidden] in, this rank's partial sums
 * [n, hidden] out (the layer's allreduce adds the ranks' parts). Dense ({@link DenseMlp}) or a Mixture of Experts
 * ({@link MoeMlp}), chosen per layer from the config.
 */
interface MlpBlock {
    /**
     * Enqueues the block on {@code s}; {@code mark} labels each operation for the op timer. {@code shortChunks}: no
     * sequence has {@link AttentionPlan#MIN_RUN} or more of the step's tokens (decode and verify steps, the shapes CUDA
     * graphs hold: {@link GraphBuckets}).
     */
    void forward(int n, boolean shortChunks, long xn, long out, CUstream s, OpMarks mark);

    /**
     * Whether {@link #forwardFused} takes this block: its linears fit the one-token kernels with the residual stream
     * folded in ({@link Linears#fusable}).
     */
    default boolean fusable() {
        return false;
    }

    /**
     * One token on one rank, the residual stream folded in: the block's input is RMSNorm(residual) · {@code gamma}
     * (computed inside its first linear) and its output is added to {@code residual} (fp32) by its last.
     */
    default void forwardFused(long residual, long gamma, float eps, CUstream s, OpMarks mark) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " has no fused one-token path");
    }

    /**
     * The weight key of a fused gate/up linear [2 inter, hidden] the block reads first, gate rows then up rows, whose
     * first rows of each half a decode step may prefetch toward L2 ({@link L2Prefetch}); null where the block reads
     * no such weight (a MoE block's experts are known only once routed).
     */
    default String gateUpKey() {
        return null;
    }

    /** The op timer's labels, one call after each operation. */
    interface OpMarks {
        void mark(String label);
    }
}
