package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/**
 * How the model's linear layers are stored, from config.json's {@code quantization_config} (read by {@code
 * io.tensorlane.modelfacts.QuantizationConfig}). The weight bytes stay the safetensors headers' own; this says what
 * they are.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelQuantization {
    @JsonPropertyDescription("quant_method as config.json writes it, e.g. fp8, compressed-tensors or fbgemm_fp8.")
    public String method;

    @JsonPropertyDescription(
            "The linear layers' weights: FP8Block (e4m3 with one scale per block, e.g. 128x128), FP8Channel (one "
                    + "scale per output row), FP8Tensor (one scale per tensor), or Other (a method or scheme the operator "
                    + "does not read; its bytes still come from the headers).")
    public Weights weights;

    @JsonPropertyDescription("The weight format in words, e.g. 'fp8 block 128x128' or 'fp8 per-channel'.")
    public String format;

    /** The weight layouts the operator tells apart. */
    public enum Weights {
        FP8Block,
        FP8Channel,
        FP8Tensor,
        Other
    }

    /** Whether the linear layers' weights are FP8 (1 byte per element plus their scales). */
    @JsonIgnore
    public boolean fp8() {
        return weights == Weights.FP8Block || weights == Weights.FP8Channel || weights == Weights.FP8Tensor;
    }
}
