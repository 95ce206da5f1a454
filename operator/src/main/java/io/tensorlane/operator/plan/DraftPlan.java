package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.contract.DraftLayout;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.modelfacts.ModelDtype;

/**
 * What a draft model (spec.serving.speculative.draftModel) takes on the fullest GPU of a pod, per engine; pure. The
 * engines place it differently, and this is the one place the planner knows it:
 *
 * <ul>
 *   <li><b>Tensorlane</b> runs the draft at TP 1 on rank 0's GPU ({@link DraftLayout}, the contract shared with the
 *       runtime's {@code DraftModel}): all of its weights and its KV cache of every KV head are on that GPU, its KV
 *       elements in its activation dtype (never fp8), its steps chunks of {@link DraftLayout#chunkTokens} tokens.
 *   <li><b>vLLM</b> ({@code draft_tensor_parallel_size}, rendered equal to the target's TP) and <b>SGLang</b> (its draft
 *       worker shares the target's tp_size) shard the draft like the target; its KV cache follows the target's
 *       {@code --kv-cache-dtype} (vLLM SpeculativeConfig.kv_cache_dtype None: "the draft inherits the target model's
 *       --kv-cache-dtype"; SGLang speculative_draft_kv_cache_dtype: "Default follows --kv-cache-dtype"), and it
 *       prefills batches of maxBatchTokens as the target does.
 * </ul>
 *
 * Every engine gives the draft one KV slot per target token (the runtime's {@code KvSizing.beside} and {@code
 * DraftModel#load}: the target's token count; SGLang: "one slot per target token (draft and target share a slot index
 * space)"), so the plan sizes both caches for the same tokens: {@link MemoryPlanner} divides the KV budget by the sum
 * of the two per-token figures. The draft's CUDA graphs are budgeted as one more {@link MemoryBudget#CUDA_GRAPH_BYTES}
 * pool (an estimate, as the target's is).
 *
 * @param tensor the draft's tensor parallelism
 * @param weightsBytes the draft's weights on the fullest GPU
 * @param kvBytesPerToken the draft's KV cache per token on that GPU
 * @param kvCacheDtype its KV elements' type
 * @param activationBytes its activation workspace there
 * @param cudaGraphBytes its captured graphs' pool there
 */
public record DraftPlan(
        int tensor,
        long weightsBytes,
        long kvBytesPerToken,
        DType kvCacheDtype,
        long activationBytes,
        long cudaGraphBytes) {

    /** The plan of {@code spec}'s draft model (defaults and the draft's facts filled in), or null without one. */
    public static DraftPlan of(InferenceDeploymentSpec spec) {
        ModelSpec d = Speculation.draftModel(spec);
        if (d == null || d.geometry == null || d.weightBytes == null) {
            return null;
        }
        int tp = tensor(spec);
        ModelGeometry g = d.geometry;
        DType kv = kvCacheDtype(spec);
        long kvPerToken = MemoryBudget.kvBytesPerToken(g.layers, g.kvHeads, g.effectiveHeadDim(), tp, kv.bytes());
        long tokens = engine(spec) == EngineType.Tensorlane
                ? DraftLayout.chunkTokens(Speculation.tokens(spec.serving.speculative), spec.serving.maxBatchTokens)
                : spec.serving.maxBatchTokens;
        MemoryBudget.Dims dims =
                MemoryPlanner.dims(g, ModelDtype.activation(d.dtype, null).bytes());
        return new DraftPlan(
                tp,
                MemoryPlanner.ceilDiv(d.weightBytes, tp),
                kvPerToken,
                kv,
                MemoryBudget.activationBytes(dims, tokens, tp),
                MemoryBudget.CUDA_GRAPH_BYTES);
    }

    /**
     * The draft's tensor parallelism: {@link DraftLayout#TENSOR_PARALLEL} (1) for the Tensorlane runtime, the target's
     * for SGLang and vLLM.
     */
    public static int tensor(InferenceDeploymentSpec spec) {
        int tp = spec.parallelism == null || spec.parallelism.tensor == null ? 1 : spec.parallelism.tensor;
        return engine(spec) == EngineType.Tensorlane ? DraftLayout.TENSOR_PARALLEL : tp;
    }

    /**
     * The draft's KV element type: the Tensorlane runtime keeps it in the draft's activation dtype (fp16 for a float16
     * checkpoint, else bf16); SGLang and vLLM use the target's KV cache dtype.
     */
    static DType kvCacheDtype(InferenceDeploymentSpec spec) {
        if (engine(spec) != EngineType.Tensorlane) {
            return MemoryPlanner.kvCacheDtype(spec);
        }
        ModelSpec d = Speculation.draftModel(spec);
        return ModelDtype.activation(d.dtype, null) == DType.fp16 ? DType.fp16 : DType.bf16;
    }

    /** Non-static bytes the draft adds: its activations and its graphs. */
    public long nonStaticBytes() {
        return activationBytes + cudaGraphBytes;
    }

    private static EngineType engine(InferenceDeploymentSpec spec) {
        return spec.engine == null || spec.engine.type == null ? EngineType.Tensorlane : spec.engine.type;
    }
}
