package io.tensorlane.runtime.llm;

import static io.tensorlane.runtime.engine.KernelArgs.l;
import static io.tensorlane.runtime.engine.KernelArgs.p;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;

import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.engine.Cuda;
import java.util.List;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/**
 * {@code tl_l2_prefetch} of {@link ModelKernels} (tl_model.cu): up to four weight spans toward L2 ({@link
 * L2Prefetch}), one block of 32 threads a multiprocessor, 16 KiB a bulk prefetch. Launches go through the owning
 * {@link ModelKernels}, on the thread that owns its context.
 */
public final class L2PrefetchKernel {
    static final int THREADS = 32;
    /** Spans one launch takes (the kernel's parameters). */
    static final int MAX_SPANS = 4;

    private final ModelKernels k;
    private final CUfunction fn = new CUfunction();
    private int grid;

    L2PrefetchKernel(ModelKernels k) {
        this.k = k;
    }

    void resolve(CUmodule module) {
        Cuda.check(
                cuModuleGetFunction(fn, module, Kernels.L2_PREFETCH_KERNEL),
                "cuModuleGetFunction(" + Kernels.L2_PREFETCH_KERNEL + ")");
    }

    /** Enqueues the prefetch of {@code spans} (at most {@link #MAX_SPANS}; none: nothing is launched). */
    public void launch(List<L2Prefetch.Span> spans, CUstream s) {
        if (spans.size() > MAX_SPANS) {
            throw new IllegalArgumentException("tl_l2_prefetch takes at most " + MAX_SPANS + " spans, got " + spans);
        }
        if (spans.stream().allMatch(x -> x.bytes() == 0)) {
            return;
        }
        L2Prefetch.Span[] a = new L2Prefetch.Span[MAX_SPANS];
        for (int i = 0; i < MAX_SPANS; i++) {
            a[i] = i < spans.size() ? spans.get(i) : L2Prefetch.Span.NONE;
        }
        k.launch(
                fn,
                grid(),
                1,
                THREADS,
                s,
                Kernels.L2_PREFETCH_KERNEL,
                p(a[0].address()),
                l(a[0].bytes()),
                p(a[1].address()),
                l(a[1].bytes()),
                p(a[2].address()),
                l(a[2].bytes()),
                p(a[3].address()),
                l(a[3].bytes()));
    }

    /** One block a multiprocessor of the current device. */
    private int grid() {
        if (grid == 0) {
            grid = Math.max(1, Cuda.multiprocessorsOfCurrentDevice());
        }
        return grid;
    }
}
