package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuModuleUnload;
import static jcuda.driver.JCudaDriver.cuOccupancyMaxActiveBlocksPerMultiprocessor;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import io.tensorlane.kernels.Kernels;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/** The fatbin loaded into one context (cuModuleLoadData: the driver picks the SASS or JITs the PTX). */
public final class KernelModule implements AutoCloseable {
    private final CUmodule module = new CUmodule();
    private final Map<Algorithm, Map<DType, CUfunction>> allreduce = new EnumMap<>(Algorithm.class);
    private final Map<DType, CUfunction> allreduceNorm = new EnumMap<>(DType.class);
    private final CUfunction copy = new CUfunction();

    /** Loads in the current context. */
    public KernelModule() {
        Cuda.check(cuModuleLoadData(module, Kernels.fatbin()), "cuModuleLoadData(" + Kernels.FATBIN_RESOURCE + ")");
        for (Algorithm a : Algorithm.values()) {
            if (!a.isCustom()) {
                continue;
            }
            Map<DType, CUfunction> m = new EnumMap<>(DType.class);
            for (DType d : DType.values()) {
                CUfunction f = new CUfunction();
                String name = Kernels.allreduceKernel(a, d);
                Cuda.check(cuModuleGetFunction(f, module, name), "cuModuleGetFunction(" + name + ")");
                m.put(d, f);
            }
            allreduce.put(a, m);
        }
        for (DType d : List.of(DType.bf16, DType.fp16)) {
            CUfunction f = new CUfunction();
            String name = Kernels.allreduceNormKernel(d);
            Cuda.check(cuModuleGetFunction(f, module, name), "cuModuleGetFunction(" + name + ")");
            allreduceNorm.put(d, f);
        }
        Cuda.check(
                cuModuleGetFunction(copy, module, Kernels.COPY_KERNEL),
                "cuModuleGetFunction(" + Kernels.COPY_KERNEL + ")");
    }

    public CUfunction allreduce(Algorithm a, DType d) {
        return allreduce.get(a).get(d);
    }

    /** The allreduce fused with the residual add + RMSNorm, for bf16 or fp16. */
    public CUfunction allreduceNorm(DType d) {
        CUfunction f = allreduceNorm.get(d);
        if (f == null) {
            throw new IllegalArgumentException("no fused allreduce + RMSNorm for " + d);
        }
        return f;
    }

    public CUfunction copyKernel() {
        return copy;
    }

    /**
     * The fewest resident blocks per multiprocessor over every allreduce kernel (the fused one with its largest row in
     * shared memory): virtual ranks need every rank's blocks resident at once.
     */
    public int residentBlocksPerSm() {
        int min = Integer.MAX_VALUE;
        for (Map<DType, CUfunction> m : allreduce.values()) {
            for (CUfunction f : m.values()) {
                min = Math.min(min, resident(f, 0));
            }
        }
        for (CUfunction f : allreduceNorm.values()) {
            min = Math.min(min, resident(f, FusedNorm.MAX_ROW_BYTES));
        }
        return min;
    }

    private static int resident(CUfunction f, int sharedBytes) {
        int[] n = {0};
        Cuda.check(
                cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, BufferLayout.THREADS_PER_BLOCK, sharedBytes),
                "cuOccupancyMaxActiveBlocksPerMultiprocessor");
        return n[0];
    }

    @Override
    public void close() {
        cuModuleUnload(module);
    }
}
