package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.i;
import static io.tensorlane.runtime.engine.KernelArgs.l;
import static io.tensorlane.runtime.engine.KernelArgs.p;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;

import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.engine.Cuda;
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * Speculative decoding's GPU kernels (tl_spec.cuh): {@link #verify}, the rejection-sampling rule of {@link
 * io.tensorlane.runtime.sched.SpecRule#verify} for a batch of sequences. Loads its own module of the model fatbin in
 * the current context (the draft-model proposer, a later slice, will share {@link ModelKernels}' instead); one thread
 * (the context's owner) at a time.
 */
public final class SpecKernels implements AutoCloseable {
    /** Threads per block: tl_spec.cuh's kSpecThreads. */
    static final int THREADS = 256;

    private final CUmodule module = new CUmodule();
    private final CUfunction verify = new CUfunction();
    private boolean closed;

    public SpecKernels() {
        Cuda.check(
                cuModuleLoadData(module, Kernels.modelFatbin()),
                "cuModuleLoadData(" + Kernels.MODEL_FATBIN_RESOURCE + ")");
        try {
            Cuda.check(
                    cuModuleGetFunction(verify, module, Kernels.SPEC_VERIFY_KERNEL),
                    "cuModuleGetFunction(" + Kernels.SPEC_VERIFY_KERNEL + ")");
        } catch (RuntimeException e) {
            cuModuleUnload(module);
            throw e;
        }
    }

    /**
     * For each of {@code seqs} sequences (one block each): how many of its {@code k[s]} guesses {@code draft} to keep
     * ({@code accepted[s]}) and the token after them ({@code next[s]}), from fp32 probabilities {@code p} (k + 1 rows
     * from row {@code pRow[s]}) and {@code q} (k rows from row {@code qRow[s]}; the guesses at {@code draft[qRow[s]]}),
     * rows {@code stride} floats apart, {@code vocab} ids each; uniforms from {@code seed[s]} (uint64) and
     * {@code counter[s]}. Device pointers; see tl_spec.cuh.
     */
    public void verify(
            long p,
            long q,
            long stride,
            long draft,
            long k,
            long pRow,
            long qRow,
            long seed,
            long counter,
            int vocab,
            int seqs,
            long accepted,
            long next,
            CUstream s) {
        if (closed) {
            throw new IllegalStateException("SpecKernels is closed");
        }
        if (vocab < 1 || stride < vocab) {
            throw new IllegalArgumentException("spec verify: vocab " + vocab + " must be 1..stride " + stride);
        }
        if (seqs <= 0) {
            return;
        }
        Pointer[] args = {
            p(p), p(q), l(stride), p(draft), p(k), p(pRow), p(qRow), p(seed), p(counter), i(vocab), p(accepted), p(next)
        };
        Cuda.check(
                cuLaunchKernel(verify, seqs, 1, 1, THREADS, 1, 1, 0, s, Pointer.to(args), null),
                "cuLaunchKernel(" + Kernels.SPEC_VERIFY_KERNEL + ", " + seqs + " blocks)");
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            cuModuleUnload(module);
        }
    }
}
