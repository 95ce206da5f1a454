package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.Map;
import java.util.TreeMap;

/** What the operator read from the model source (config.json and the safetensors headers) before planning. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ModelStatus {
    @JsonPropertyDescription("The source that was read, normalized (hf:// with the revision asked for, e.g. @main).")
    public String source;

    @JsonPropertyDescription("The exact revision read: the commit sha for hf:// (the download step is pinned to it).")
    public String revision;

    @JsonPropertyDescription("Architecture from config.json, e.g. LlamaForCausalLM.")
    public String architecture;

    @JsonPropertyDescription("Geometry from config.json; the planner uses it where spec.model.geometry is not set.")
    public ModelGeometry geometry;

    @JsonPropertyDescription("max_position_embeddings from config.json.")
    public Integer maxPositionEmbeddings;

    @JsonPropertyDescription("Weight dtype from config.json (torch_dtype / dtype), e.g. bfloat16; for a quantized "
            + "checkpoint the dtype of its unquantized tensors and activations (see quantization).")
    public String dtype;

    @JsonPropertyDescription("config.json's quantization_config, when the checkpoint is quantized (e.g. FP8): the "
            + "method and how the linear layers' weights are stored. Absent for an unquantized checkpoint.")
    public ModelQuantization quantization;

    @JsonPropertyDescription(
            "Bytes of all tensors in the safetensors files; the planner uses it where spec.model.weightBytes "
                    + "is not set.")
    public Long weightBytes;

    @JsonPropertyDescription("Parameters (elements of every tensor except FP8 scales), from the safetensors headers.")
    public Long parameters;

    @JsonPropertyDescription("Parameters one token uses: all of them for a dense model; for a Mixture of Experts, all "
            + "but the routed experts it is not sent to (per MoE layer expertsPerToken of the experts count; the "
            + "router, attention, embeddings, lm_head and dense layers count fully).")
    public Long activeParameters;

    @JsonPropertyDescription("Weight bytes one token reads (FP8 scales included), counted as activeParameters; equals "
            + "weightBytes for a dense model. The memory plan holds all weightBytes (every expert stays in memory).")
    public Long activeWeightBytes;

    @JsonPropertyDescription("Tensor bytes per safetensors dtype (BF16, F8_E4M3, F32, ...).")
    public Map<String, Long> weightBytesByDtype = new TreeMap<>();

    @JsonPropertyDescription("Number of safetensors files.")
    public Integer files;

    @JsonPropertyDescription("When the model was read (RFC 3339).")
    public String readAt;
}
