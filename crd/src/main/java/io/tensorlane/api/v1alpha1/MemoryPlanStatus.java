package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/** Per-GPU memory plan. All byte figures are per GPU. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class MemoryPlanStatus {
    @JsonPropertyDescription("Total memory of one GPU in bytes.")
    public Long gpuMemoryBytes;

    @JsonPropertyDescription(
            "Static fraction (SGLang mem_fraction_static meaning): weights + KV cache over total memory.")
    public Double staticFraction;

    @JsonPropertyDescription("vLLM gpu_memory_utilization equivalent: everything the engine may use over total memory.")
    public Double gpuMemoryUtilization;

    @JsonPropertyDescription("KV-cache capacity in tokens per replica.")
    public Long kvCacheTokens;

    @JsonPropertyDescription("Whether the fraction came from the planner (auto) or the user (user).")
    public String fractionSource;

    @JsonPropertyDescription("Weights per GPU (weightBytes / tensor).")
    public Long weightsBytes;

    @JsonPropertyDescription("KV cache per GPU (the target's; a draft model's is draftKvCacheBytes).")
    public Long kvCacheBytes;

    @JsonPropertyDescription(
            "Draft-model speculation: the draft's weights on the fullest GPU (Tensorlane: all of them on "
                    + "rank 0's GPU, the draft runs at TP 1; SGLang and vLLM: weightBytes / tensor, the draft shares the "
                    + "target's TP). Counted in staticFraction.")
    public Long draftWeightsBytes;

    @JsonPropertyDescription("Draft-model speculation: the draft's KV cache on the fullest GPU, for as many tokens as "
            + "kvCacheTokens (every engine gives the draft one slot per target token). Counted in staticFraction.")
    public Long draftKvCacheBytes;

    @JsonPropertyDescription("Element type the KV cache is sized with: spec.serving.kvCacheDtype, auto resolved to the "
            + "model's activation dtype (bf16, fp16, fp8 or fp32).")
    public String kvCacheDtype;

    @JsonPropertyDescription("Activation workspace per GPU (from maxBatchTokens and the geometry).")
    public Long activationBytes;

    @JsonPropertyDescription("CUDA context and library handles.")
    public Long cudaContextBytes;

    @JsonPropertyDescription("CUDA-graph capture reserve.")
    public Long cudaGraphBytes;

    @JsonPropertyDescription("NCCL communicator buffers.")
    public Long ncclBytes;

    @JsonPropertyDescription("Custom-allreduce IPC buffers, from the kernels' buffer layout (0 when NCCL is used).")
    public Long allreduceIpcBytes;

    @JsonPropertyDescription("User reserve (spec.memory.reserveMiB).")
    public Long reserveBytes;

    @JsonPropertyDescription("Bytes left free by the plan; negative when the plan does not fit.")
    public Long headroomBytes;

    @JsonPropertyDescription("Human-readable warnings about the plan.")
    public List<String> warnings = new ArrayList<>();
}
