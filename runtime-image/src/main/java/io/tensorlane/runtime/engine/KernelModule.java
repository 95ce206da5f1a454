package io.tensorlane.runtime.engine;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;
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
import jcuda.Pointer;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;

/** The fatbin loaded into one context (cuModuleLoadData: the driver picks the SASS or JITs the PTX). */
public final class KernelModule implements AutoCloseable {
    private final CUmodule module = new CUmodule();
    private final Map<Algorithm, Map<DType, CUfunction>> allreduce = new EnumMap<>(Algorithm.class);
    private final Map<DType, CUfunction> allreduceNorm = new EnumMap<>(DType.class);
    private final Map<DType, CUfunction> push = new EnumMap<>(DType.class);
    private final Map<DType, CUfunction> pushNorm = new EnumMap<>(DType.class);
    private final CUfunction copy;

    /** Loads in the current context. */
    public KernelModule() {
        Cuda.check(cuModuleLoadData(module, Kernels.fatbin()), "cuModuleLoadData(" + Kernels.FATBIN_RESOURCE + ")");
        for (Algorithm a : Algorithm.values()) {
            if (!a.isCustom()) {
                continue;
            }
            Map<DType, CUfunction> m = new EnumMap<>(DType.class);
            for (DType d : DType.values()) {
                m.put(d, function(Kernels.allreduceKernel(a, d)));
            }
            allreduce.put(a, m);
        }
        for (DType d : List.of(DType.bf16, DType.fp16)) {
            allreduceNorm.put(d, function(Kernels.allreduceNormKernel(d)));
            push.put(d, function(Kernels.allreducePushKernel(d)));
            pushNorm.put(d, function(Kernels.allreducePushNormKernel(d)));
        }
        copy = function(Kernels.COPY_KERNEL);
    }

    private CUfunction function(String name) {
        CUfunction f = new CUfunction();
        Cuda.check(cuModuleGetFunction(f, module, name), "cuModuleGetFunction(" + name + ")");
        return f;
    }

    public CUfunction allreduce(Algorithm a, DType d) {
        return allreduce.get(a).get(d);
    }

    /** The allreduce fused with the residual add + RMSNorm, for bf16 or fp16. */
    public CUfunction allreduceNorm(DType d) {
        return sixteenBit(allreduceNorm, d, "fused allreduce + RMSNorm");
    }

    /** OneStage's push variant ({@code tl_push.cuh}), for bf16 or fp16. */
    public CUfunction push(DType d) {
        return sixteenBit(push, d, "OneStage's push variant");
    }

    /** The push variant fused with the residual add + RMSNorm, for bf16 or fp16. */
    public CUfunction pushNorm(DType d) {
        return sixteenBit(pushNorm, d, "the push variant's allreduce + RMSNorm");
    }

    private static CUfunction sixteenBit(Map<DType, CUfunction> m, DType d, String what) {
        CUfunction f = m.get(d);
        if (f == null) {
            throw new IllegalArgumentException("no " + what + " for " + d);
        }
        return f;
    }

    public CUfunction copyKernel() {
        return copy;
    }

    /**
     * The fewest resident blocks per multiprocessor over every allreduce kernel (the fused ones with their largest row in
     * shared memory): virtual ranks need every rank's blocks resident at once.
     */
    public int residentBlocksPerSm() {
        int min = Integer.MAX_VALUE;
        for (Map<DType, CUfunction> m : allreduce.values()) {
            for (CUfunction f : m.values()) {
                min = Math.min(min, resident(f, 0));
            }
        }
        for (CUfunction f : push.values()) {
            min = Math.min(min, resident(f, 0));
        }
        for (Map<DType, CUfunction> m : List.of(allreduceNorm, pushNorm)) {
            for (CUfunction f : m.values()) {
                min = Math.min(min, resident(f, FusedNorm.MAX_ROW_BYTES));
            }
        }
        return min;
    }

    /**
     * Launches an allreduce entry: {@code blocks} x {@link BufferLayout#THREADS_PER_BLOCK} threads on {@code stream};
     * returns the driver's result (the caller words the error).
     */
    static int launch(CUfunction f, int blocks, int sharedBytes, CUstream stream, Pointer params) {
        return cuLaunchKernel(f, blocks, 1, 1, BufferLayout.THREADS_PER_BLOCK, 1, 1, sharedBytes, stream, params, null);
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
