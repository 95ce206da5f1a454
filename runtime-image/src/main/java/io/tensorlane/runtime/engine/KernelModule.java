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
import java.util.Map;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/** The fatbin loaded into one context (cuModuleLoadData: the driver picks the SASS or JITs the PTX). */
public final class KernelModule implements AutoCloseable {
    private final CUmodule module = new CUmodule();
    private final Map<Algorithm, Map<DType, CUfunction>> allreduce = new EnumMap<>(Algorithm.class);
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
        Cuda.check(
                cuModuleGetFunction(copy, module, Kernels.COPY_KERNEL),
                "cuModuleGetFunction(" + Kernels.COPY_KERNEL + ")");
    }

    public CUfunction allreduce(Algorithm a, DType d) {
        return allreduce.get(a).get(d);
    }

    public CUfunction copyKernel() {
        return copy;
    }

    /** The fewest resident blocks per multiprocessor over every allreduce kernel. */
    public int residentBlocksPerSm() {
        int min = Integer.MAX_VALUE;
        for (Map<DType, CUfunction> m : allreduce.values()) {
            for (CUfunction f : m.values()) {
                int[] n = {0};
                Cuda.check(
                        cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, BufferLayout.THREADS_PER_BLOCK, 0),
                        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
                min = Math.min(min, n[0]);
            }
        }
        return min;
    }

    @Override
    public void close() {
        cuModuleUnload(module);
    }
}
