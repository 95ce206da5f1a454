package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/** Transformer dimensions (as in the model's config.json). */
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
    @JsonPropertyDescription("MLP intermediate size (intermediate_size). Defaults to 4 x hiddenSize.")
    public Integer intermediateSize;

    public int effectiveHeadDim() {
        return headDim != null ? headDim : hiddenSize / attentionHeads;
    }

    public int effectiveIntermediateSize() {
        return intermediateSize != null ? intermediateSize : 4 * hiddenSize;
    }
}
