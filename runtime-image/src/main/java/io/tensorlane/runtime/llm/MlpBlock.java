package io.tensorlane.runtime.llm;

import jcuda.driver.CUstream;

/**
 * The MLP half of one decoder layer on one rank: the normed hidden states xn [n, hidden] in, this rank's partial sums
 * [n, hidden] out (the layer's allreduce adds the ranks' parts). Dense ({@link DenseMlp}) or a Mixture of Experts
 * ({@link MoeMlp}), chosen per layer from the config.
 */
interface MlpBlock {
    /** Enqueues the block on {@code s}; {@code mark} labels each operation for the op timer. */
    void forward(int n, long xn, long out, CUstream s, OpMarks mark);

    /** The op timer's labels, one call after each operation. */
    interface OpMarks {
        void mark(String label);
    }
}
