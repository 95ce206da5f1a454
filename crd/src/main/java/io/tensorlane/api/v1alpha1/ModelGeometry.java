package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/**
 * Transformer dimensions (as in the model's config.json). A Mixture-of-Experts model also has {@code experts},
 * {@code expertsPerToken} and {@code expertIntermediateSize} (all three or none), and {@code moeLayers} when some of
 * its layers keep a dense MLP.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelGeometry {
    @Required
    @Min(1)
    @Max(1024)
    @JsonPropertyDescription("Number of transformer layers (num_hidden_layers).")
    public Integer layers;

    @Required
    @Min(1)
    @JsonPropertyDescription("Hidden size (hidden_size).")
    public Integer hiddenSize;

    @Required
    @Min(1)
    @JsonPropertyDescription("Attention heads (num_attention_heads).")
    public Integer attentionHeads;

    @Required
    @Min(1)
    @JsonPropertyDescription("Key/value heads (num_key_value_heads); equals attentionHeads without GQA.")
    public Integer kvHeads;

    @Min(1)
    @JsonPropertyDescription("Dimension of one head (head_dim). Defaults to hiddenSize / attentionHeads.")
    public Integer headDim;

    @Min(1)
    @JsonPropertyDescription("Vocabulary size (vocab_size); sizes the logits buffer.")
    public Integer vocabSize;

    @Min(1)
    @JsonPropertyDescription(
            "MLP intermediate size (intermediate_size) of the dense MLP layers; of a Mixture-of-Experts "
                    + "model, the size of its dense layers' MLP (Qwen3-MoE mlp_only_layers), or of one expert for Mixtral. "
                    + "Defaults to 4 x hiddenSize.")
    public Integer intermediateSize;

    @Min(1)
    @JsonPropertyDescription(
            "Mixture of Experts: routed experts per MoE layer (num_experts; Mixtral: num_local_experts). "
                    + "Absent for a dense model. Every expert is in GPU memory: the weight bytes count them all.")
    public Integer experts;

    @Min(1)
    @JsonPropertyDescription("Mixture of Experts: experts each token is routed to (top-k, num_experts_per_tok); only "
            + "their weights are read for a token (status.model.activeParameters).")
    public Integer expertsPerToken;

    @Min(1)
    @JsonPropertyDescription("Mixture of Experts: intermediate size of one expert (moe_intermediate_size; Mixtral: "
            + "intermediate_size). Tensor parallelism splits every expert, so it must divide by parallelism.tensor.")
    public Integer expertIntermediateSize;

    @Min(1)
    @Max(1024)
    @JsonPropertyDescription("Mixture of Experts: layers whose MLP is a MoE block (the rest are dense with "
            + "intermediateSize; Qwen3-MoE decoder_sparse_step and mlp_only_layers). Defaults to layers.")
    public Integer moeLayers;

    public int effectiveHeadDim() {
        return headDim != null ? headDim : hiddenSize / attentionHeads;
    }

    public int effectiveIntermediateSize() {
        return intermediateSize != null ? intermediateSize : 4 * hiddenSize;
    }

    /** A Mixture-of-Experts model: {@code experts} is set. */
    @JsonIgnore
    public boolean moe() {
        return experts != null;
    }

    /** Layers with a MoE block: {@code moeLayers}, else every layer of a MoE model; 0 for a dense model. */
    public int effectiveMoeLayers() {
        if (!moe()) {
            return 0;
        }
        return moeLayers != null ? moeLayers : layers;
    }

    /** Layers with a dense MLP of {@link #effectiveIntermediateSize()}. */
    public int denseLayers() {
        return layers - effectiveMoeLayers();
    }

    /**
     * The MLP width one token's activations take in the widest layer: the dense intermediate size, or in a MoE layer
     * expertsPerToken × expertIntermediateSize (each token goes through that many experts); the larger of the two when
     * the model has both kinds of layers. What the activation estimate sizes the MLP by.
     */
    public int activationIntermediateSize() {
        if (!moe() || expertsPerToken == null || expertIntermediateSize == null) {
            return effectiveIntermediateSize();
        }
        int routed = expertsPerToken * expertIntermediateSize;
        return denseLayers() > 0 ? Math.max(routed, effectiveIntermediateSize()) : routed;
    }
}
