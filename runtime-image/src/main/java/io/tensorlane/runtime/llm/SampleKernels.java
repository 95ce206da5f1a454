package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.l;
import static io.tensorlane.runtime.engine.KernelArgs.p;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;

import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.sched.SamplingRows;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * The token sampler of {@link ModelKernels} (tl_sample.cuh's tl_sample_f32): one block a logits row; and what feeds its
 * ids on to the next step of a chain ({@link #chainAdvance}, tl_spec.cuh). Launches go through the owning {@link
 * ModelKernels}, on the thread that owns its context.
 */
public final class SampleKernels {
    static final int SAMPLE_THREADS = 1024;

    private final ModelKernels k;
    private final CUfunction sample = new CUfunction();
    private final CUfunction advance = new CUfunction();

    SampleKernels(ModelKernels k) {
        this.k = k;
    }

    void resolve(CUmodule module) {
        Cuda.check(
                cuModuleGetFunction(sample, module, Kernels.SAMPLE_KERNEL),
                "cuModuleGetFunction(" + Kernels.SAMPLE_KERNEL + ")");
        Cuda.check(
                cuModuleGetFunction(advance, module, Kernels.CHAIN_ADVANCE_KERNEL),
                "cuModuleGetFunction(" + Kernels.CHAIN_ADVANCE_KERNEL + ")");
    }

    /**
     * Chained greedy steps ({@link ChainedSteps}): {@code chainOut[j] = outIds[idsIndex]} and, unless {@code last}, the
     * step inputs of a one-token step of that id at position {@code positions[posIndex] + 1} (ids, positions, slots from
     * row 0 of {@code tables} with {@code blockSize}, token row and logits token 0). One thread; device pointers.
     */
    public void chainAdvance(
            long outIds,
            int idsIndex,
            int posIndex,
            long ids,
            long positions,
            long slots,
            long tokenRow,
            long logitTokens,
            long tables,
            int blockSize,
            long chainOut,
            int j,
            boolean last,
            CUstream s) {
        ModelKernels.positive("blockSize", blockSize);
        if (idsIndex < 0 || posIndex < 0 || j < 0) {
            throw new IllegalArgumentException(
                    "chain advance: ids index " + idsIndex + ", position index " + posIndex + ", step " + j);
        }
        k.launch(
                advance,
                1,
                1,
                32,
                s,
                Kernels.CHAIN_ADVANCE_KERNEL,
                p(outIds),
                i(idsIndex),
                i(posIndex),
                p(ids),
                p(positions),
                p(slots),
                p(tokenRow),
                p(logitTokens),
                p(tables),
                i(blockSize),
                p(chainOut),
                i(j),
                i(last ? 1 : 0));
    }

    /**
     * outIds[i] = the token drawn from fp32 logits row i (row i at logits + i*stride elements) by row i of {@code params}
     * (a {@link SamplingRows} layout for {@code capacity} rows, 8-byte aligned): greedy rows take the argmax (ties: lowest
     * index; NaN never wins), others temperature / top-k / top-p / min-p with the seeded Gumbel-max draw (tl_sample.cuh).
     * Penalised rows take their (id, value) pairs from {@code penalties} (8-byte aligned) and rewrite their logits in
     * place first.
     */
    public void sample(
            long logits,
            int m,
            int vocab,
            long stride,
            long params,
            int capacity,
            long penalties,
            long outIds,
            CUstream s) {
        ModelKernels.positive("vocab", vocab);
        if (stride < vocab) {
            throw new IllegalArgumentException("sample: stride " + stride + " < vocab " + vocab);
        }
        if (m > capacity || capacity % 2 != 0 || (params & 7) != 0 || (penalties & 7) != 0) {
            throw new IllegalArgumentException("sample: " + m + " rows need an even capacity >= m (got " + capacity
                    + ") and 8-byte aligned params and penalties");
        }
        if (m <= 0) {
            return;
        }
        k.launch(
                sample,
                m,
                1,
                SAMPLE_THREADS,
                s,
                Kernels.SAMPLE_KERNEL,
                p(logits),
                i(m),
                i(vocab),
                l(stride),
                p(params),
                i(capacity),
                p(penalties),
                p(outIds));
    }
}
