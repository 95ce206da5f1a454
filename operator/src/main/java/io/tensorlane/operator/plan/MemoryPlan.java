package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.MemoryPlanStatus;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-GPU memory plan. All byte figures are per GPU; see {@link MemoryPlanner} for how each is computed.
 *
 * @param gpuMemoryBytes total memory of one GPU
 * @param staticFraction SGLang's mem_fraction_static: (weights + KV cache) / total, two decimals
 * @param gpuMemoryUtilization vLLM's gpu_memory_utilization: everything but the user reserve / total, two decimals
 * @param kvCacheTokens KV-cache capacity in tokens (per replica: every GPU holds its shard of the same tokens)
 * @param kvCacheDtype the element type the KV cache is sized with (spec.serving.kvCacheDtype, auto resolved)
 * @param fractionSource auto (planner) or user (spec.memory.fraction)
 * @param nonStaticBytes activations + CUDA context + CUDA graphs + NCCL + allreduce IPC + reserve
 * @param headroomBytes total − static − non-static; negative when the plan does not fit
 * @param fractionTooHigh a user fraction leaves less than the non-static need (the seed's OOM); a warning, not an error
 * @param warnings human-readable warnings
 * @param draftWeightsBytes a draft model's weights on the fullest GPU (0 without one), part of the static pool
 * @param draftKvCacheBytes a draft model's KV cache there, for kvCacheTokens tokens (0 without one), part of the static
 *     pool; kvCacheBytes is then the target's share
 */
public record MemoryPlan(
        long gpuMemoryBytes,
        double staticFraction,
        double gpuMemoryUtilization,
        long kvCacheTokens,
        DType kvCacheDtype,
        String fractionSource,
        long weightsBytes,
        long kvCacheBytes,
        long activationBytes,
        long cudaContextBytes,
        long cudaGraphBytes,
        long ncclBytes,
        long allreduceIpcBytes,
        long reserveBytes,
        long nonStaticBytes,
        long headroomBytes,
        boolean fractionTooHigh,
        List<String> warnings,
        long draftWeightsBytes,
        long draftKvCacheBytes) {

    public static final String AUTO = "auto";
    public static final String USER = "user";

    public MemoryPlan {
        warnings = List.copyOf(warnings);
    }

    /** The status form ({@code status.memoryPlan}). */
    public MemoryPlanStatus toStatus() {
        MemoryPlanStatus s = new MemoryPlanStatus();
        s.gpuMemoryBytes = gpuMemoryBytes;
        s.staticFraction = staticFraction;
        s.gpuMemoryUtilization = gpuMemoryUtilization;
        s.kvCacheTokens = kvCacheTokens;
        s.fractionSource = fractionSource;
        s.weightsBytes = weightsBytes;
        s.kvCacheBytes = kvCacheBytes;
        s.kvCacheDtype = kvCacheDtype.name();
        s.activationBytes = activationBytes;
        s.cudaContextBytes = cudaContextBytes;
        s.cudaGraphBytes = cudaGraphBytes;
        s.ncclBytes = ncclBytes;
        s.allreduceIpcBytes = allreduceIpcBytes;
        s.reserveBytes = reserveBytes;
        s.headroomBytes = headroomBytes;
        s.warnings = new ArrayList<>(warnings);
        if (draftWeightsBytes > 0 || draftKvCacheBytes > 0) {
            s.draftWeightsBytes = draftWeightsBytes;
            s.draftKvCacheBytes = draftKvCacheBytes;
        }
        return s;
    }
}
