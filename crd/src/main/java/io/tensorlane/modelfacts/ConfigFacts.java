package io.tensorlane.modelfacts;

import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelQuantization;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the planner needs from a Hugging Face {@code config.json}: the architecture, the geometry (with the experts of
 * a Mixture of Experts, {@link MoeConfig}), the context length, the weight dtype and the quantization. Reads transformers 4 ({@code torch_dtype}) and 5 ({@code dtype}) spellings
 * and configs that nest the language model under {@code text_config} (through {@link ConfigJson}, the one parse of
 * config.json; the runtime's ModelConfig is these facts plus the engine-only fields). Errors name the file and the
 * config.json field.
 *
 * @param architecture the Hugging Face class, e.g. LlamaForCausalLM
 * @param maxPositionEmbeddings max_position_embeddings
 * @param dtype torch_dtype / dtype as written, e.g. bfloat16 (a quantized checkpoint's unquantized tensors and
 *     activations)
 * @param quantization what {@code quantization_config} says of the linear layers' weights ({@link
 *     QuantizationConfig}), or null when the checkpoint is not quantized
 */
public record ConfigFacts(
        String architecture,
        ModelGeometry geometry,
        int maxPositionEmbeddings,
        String dtype,
        ModelQuantization quantization) {
    /** The dense decoder-only architectures: every engine serves them, Tensorlane's runtime in bf16/fp16 and FP8. */
    public static final List<String> DENSE =
            List.of("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM");
    /**
     * The Mixture-of-Experts architectures ({@link MoeConfig}): every engine serves their bf16/fp16 and FP8
     * checkpoints, Tensorlane's runtime included (tensor parallel inside every expert).
     */
    public static final List<String> MOE = List.of("Qwen3MoeForCausalLM", "MixtralForCausalLM");
    /**
     * Every architecture whose facts are read, which is every architecture Tensorlane's runtime serves: {@link #DENSE},
     * then {@link #MOE}.
     */
    public static final List<String> READ =
            java.util.stream.Stream.concat(DENSE.stream(), MOE.stream()).toList();
    /** The class of each {@code model_type} read (when a config has no {@code architectures}). */
    public static final Map<String, String> MODEL_TYPES = modelTypes();

    /** Facts of an unquantized checkpoint. */
    public ConfigFacts(String architecture, ModelGeometry geometry, int maxPositionEmbeddings, String dtype) {
        this(architecture, geometry, maxPositionEmbeddings, dtype, null);
    }

    private static Map<String, String> modelTypes() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("llama", "LlamaForCausalLM");
        m.put("mistral", "MistralForCausalLM");
        m.put("qwen2", "Qwen2ForCausalLM");
        m.put("qwen3", "Qwen3ForCausalLM");
        m.put("qwen3_moe", "Qwen3MoeForCausalLM");
        m.put("mixtral", "MixtralForCausalLM");
        return java.util.Collections.unmodifiableMap(m);
    }

    /**
     * Parses config.json text.
     *
     * @param sourceName the file as the user knows it (e.g. hf://org/name@sha/config.json); starts every error message
     * @throws ModelFactsException malformed JSON, a missing or invalid field, or an unsupported architecture
     *     ({@link UnsupportedArchitectureException})
     */
    public static ConfigFacts parse(String json, String sourceName) {
        return of(ConfigJson.parse(json, sourceName));
    }

    /** The facts of a parsed config.json (the runtime reads its engine-only fields from the same {@code config}). */
    public static ConfigFacts of(ConfigJson config) {
        String arch = config.architecture();
        List<String> variants = MoeConfig.unsupportedVariants(config);
        if (!variants.isEmpty()) {
            throw new UnsupportedArchitectureException(
                    config.source() + ": architecture " + arch + " uses " + String.join(", ", variants)
                            + ", which Tensorlane does not plan or serve (Mixture of Experts without shared experts, "
                            + "grouped routing or latent attention only: " + String.join(", ", MOE) + ")",
                    arch);
        }
        if (!READ.contains(arch)) {
            throw new UnsupportedArchitectureException(
                    config.source() + ": architecture " + arch
                            + " is not supported by the Tensorlane runtime (supported: " + String.join(", ", DENSE)
                            + "; Mixture of Experts: " + String.join(", ", MOE)
                            + ", bf16/fp16 on every engine, FP8 on engines SGLang and VLLM)",
                    arch);
        }
        int hidden = config.requirePositive("hidden_size");
        int heads = config.requirePositive("num_attention_heads");
        Integer kv = config.optPositive("num_key_value_heads");
        Integer headDim = config.optPositive("head_dim");
        if (headDim == null && hidden % heads != 0) {
            throw config.error("hidden_size " + hidden + " is not a multiple of num_attention_heads " + heads
                    + " and there is no head_dim");
        }
        ModelGeometry g = new ModelGeometry();
        g.layers = config.requirePositive("num_hidden_layers");
        g.hiddenSize = hidden;
        g.attentionHeads = heads;
        g.kvHeads = kv == null ? heads : kv;
        g.headDim = headDim == null ? hidden / heads : headDim;
        g.vocabSize = config.requirePositive("vocab_size");
        g.intermediateSize = config.requirePositive("intermediate_size");
        if (heads % g.kvHeads != 0) {
            throw config.error(
                    "num_attention_heads " + heads + " is not a multiple of num_key_value_heads " + g.kvHeads);
        }
        MoeConfig moe = MoeConfig.read(config, arch, g.layers);
        if (moe != null) {
            g.experts = moe.experts();
            g.expertsPerToken = moe.expertsPerToken();
            g.expertIntermediateSize = moe.expertIntermediateSize();
            g.moeLayers = moe.moeLayers().size();
        }
        return new ConfigFacts(
                arch,
                g,
                config.requirePositive("max_position_embeddings"),
                config.dtype(),
                QuantizationConfig.read(config));
    }
}
