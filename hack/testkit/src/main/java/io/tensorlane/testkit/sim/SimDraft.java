package io.tensorlane.testkit.sim;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.contract.DraftLayout;
import io.tensorlane.contract.MemoryBudget;
import io.tensorlane.modelfacts.ModelDtype;

/**
 * What the Tensorlane runtime's draft model ({@code TENSORLANE_SPECULATIVE=draft:DIR,k=K}) takes on rank 0's GPU, the
 * fullest one, from the draft's facts in the owner's spec (spec.serving.speculative.draftModel, its geometry, weight
 * bytes and dtype filled in from status.draftModel by {@link SimOwners}). Where it goes is {@link DraftLayout}, the
 * contract the runtime's {@code DraftModel} loads by: TP {@value DraftLayout#TENSOR_PARALLEL} on rank 0's GPU, so all of
 * its weights and a KV cache of every KV head there, for as many tokens as the target's ({@code KvSizing.beside},
 * {@code DraftModel.load}: the target's token count), its KV elements in its activation dtype (never fp8); one sequence
 * a step in chunks of {@link DraftLayout#chunkTokens} tokens; an engine of its own, so its own CUDA graph pool. The
 * figures are {@link MemoryBudget}'s, as the planner's. Pure.
 *
 * @param weightsBytes all of the draft's weights (0 when unknown)
 * @param kvBytesPerToken its KV cache per token ({@link MemoryBudget#kvBytesPerToken} at TP 1)
 * @param activationBytes its activation workspace ({@link MemoryBudget#activationBytes} for its chunks, TP 1)
 * @param cudaGraphBytes its graphs' pool ({@link MemoryBudget#CUDA_GRAPH_BYTES})
 */
public record SimDraft(long weightsBytes, long kvBytesPerToken, long activationBytes, long cudaGraphBytes) {
    /** No draft model. */
    public static final SimDraft NONE = new SimDraft(0, 0, 0, 0);

    /**
     * The draft of {@code owner} for a pod speculating {@code k} tokens with forward batches of {@code batchTokens};
     * only its graphs when its geometry is unknown (no owner, or the draft not read yet).
     */
    public static SimDraft of(InferenceDeploymentSpec owner, int k, long batchTokens) {
        ModelSpec d = owner == null || owner.serving == null || owner.serving.speculative == null
                ? null
                : owner.serving.speculative.draftModel;
        ModelGeometry g = d == null ? null : d.geometry;
        if (g == null || g.layers == null || g.hiddenSize == null || g.attentionHeads == null || g.kvHeads == null) {
            return new SimDraft(0, 0, 0, MemoryBudget.CUDA_GRAPH_BYTES);
        }
        int tp = DraftLayout.TENSOR_PARALLEL;
        int act = ModelDtype.activation(d.dtype, null).bytes();
        MemoryBudget.Dims dims = SimMemory.dims(g, act);
        int chunk =
                DraftLayout.chunkTokens(Math.max(1, k), (int) Math.min(Integer.MAX_VALUE, Math.max(1, batchTokens)));
        return new SimDraft(
                d.weightBytes == null ? 0 : d.weightBytes,
                MemoryBudget.kvBytesPerToken(
                        g.layers,
                        g.kvHeads,
                        g.effectiveHeadDim(),
                        tp,
                        kvDtype(d).bytes()),
                MemoryBudget.activationBytes(dims, chunk, tp),
                MemoryBudget.CUDA_GRAPH_BYTES);
    }

    /** The draft's KV elements: its activation dtype, fp16 for a float16 checkpoint, else bf16 (DraftLayout). */
    static ModelSpec.DType kvDtype(ModelSpec draft) {
        return ModelDtype.activation(draft.dtype, null) == ModelSpec.DType.fp16
                ? ModelSpec.DType.fp16
                : ModelSpec.DType.bf16;
    }
}
