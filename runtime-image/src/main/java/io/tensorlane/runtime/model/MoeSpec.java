package io.tensorlane.runtime.model;

import io.tensorlane.modelfacts.MoeConfig;
import java.util.List;
import java.util.Objects;

/**
 * The Mixture-of-Experts layers of a model: the facts the operator plans from ({@link MoeConfig}: experts, top-k, one
 * expert's intermediate size, which layers are MoE) and how the router's top-k weights are formed.
 *
 * @param normTopK the k chosen softmax probabilities divided by their sum (Mixtral always; Qwen3-MoE when {@code
 *     norm_topk_prob}); false: the probabilities as they are
 */
public record MoeSpec(MoeConfig facts, boolean normTopK) {
    /** The routing kernel's limits (tl_moe.cuh: one warp per token, 16 logits a lane; a slot a lane). */
    public static final int MAX_EXPERTS = io.tensorlane.contract.MoeLimits.MAX_EXPERTS;

    public static final int MAX_TOP_K = io.tensorlane.contract.MoeLimits.MAX_TOP_K;

    public MoeSpec {
        Objects.requireNonNull(facts, "facts");
        if (facts.experts() > MAX_EXPERTS) {
            throw new ModelException(
                    "num_experts " + facts.experts() + " is more than the engine's router takes (" + MAX_EXPERTS + ")");
        }
        if (facts.expertsPerToken() > MAX_TOP_K) {
            throw new ModelException("num_experts_per_tok " + facts.expertsPerToken()
                    + " is more than the engine's router takes (" + MAX_TOP_K + ")");
        }
    }

    public int experts() {
        return facts.experts();
    }

    public int topK() {
        return facts.expertsPerToken();
    }

    public int expertIntermediateSize() {
        return facts.expertIntermediateSize();
    }

    public List<Integer> moeLayers() {
        return facts.moeLayers();
    }

    public boolean isMoe(int layer) {
        return facts.moeLayers().contains(layer);
    }
}
