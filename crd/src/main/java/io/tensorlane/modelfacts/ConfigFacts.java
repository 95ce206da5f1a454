package io.tensorlane.modelfacts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import java.util.List;

/**
 * What the planner needs from a Hugging Face {@code config.json}: the architecture, the geometry, the context length
 * and the weight dtype. Reads transformers 4 ({@code torch_dtype}) and 5 ({@code dtype}) spellings and configs that
 * nest the language model under {@code text_config}. Errors name the file and the config.json field.
 *
 * @param architecture the Hugging Face class, e.g. LlamaForCausalLM
 * @param maxPositionEmbeddings max_position_embeddings
 * @param dtype torch_dtype / dtype as written, e.g. bfloat16
 */
public record ConfigFacts(String architecture, ModelGeometry geometry, int maxPositionEmbeddings, String dtype) {
  /** The decoder-only architectures Tensorlane's runtime serves. */
  public static final List<String> SUPPORTED = List.of("LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM",
      "Qwen3ForCausalLM");
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * Parses config.json text.
   *
   * @param sourceName the file as the user knows it (e.g. hf://org/name@sha/config.json); starts every error message
   * @throws ModelFactsException malformed JSON, a missing or invalid field, or an unsupported architecture
   *     ({@link UnsupportedArchitectureException})
   */
  public static ConfigFacts parse(String json, String sourceName) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new ModelFactsException(sourceName + ": not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new ModelFactsException(sourceName + ": expected a JSON object");
    }
    String arch = architecture(root, sourceName);
    JsonNode text = root.get("text_config");
    Fields f = new Fields(text != null && text.isObject() ? text : root, root, sourceName,
        text != null && text.isObject() ? "text_config." : "");
    int hidden = f.requireInt("hidden_size");
    int heads = f.requireInt("num_attention_heads");
    Integer kv = f.optInt("num_key_value_heads");
    Integer headDim = f.optInt("head_dim");
    if (headDim == null && hidden % heads != 0) {
      throw new ModelFactsException(sourceName + ": hidden_size " + hidden + " is not a multiple of num_attention_heads "
          + heads + " and there is no head_dim");
    }
    ModelGeometry g = new ModelGeometry();
    g.layers = f.requireInt("num_hidden_layers");
    g.hiddenSize = hidden;
    g.attentionHeads = heads;
    g.kvHeads = kv == null ? heads : kv;
    g.headDim = headDim == null ? hidden / heads : headDim;
    g.vocabSize = f.requireInt("vocab_size");
    g.intermediateSize = f.requireInt("intermediate_size");
    if (heads % g.kvHeads != 0) {
      throw new ModelFactsException(sourceName + ": num_attention_heads " + heads
          + " is not a multiple of num_key_value_heads " + g.kvHeads);
    }
    return new ConfigFacts(arch, g, f.requireInt("max_position_embeddings"), f.dtype());
  }

  private static String architecture(JsonNode root, String sourceName) {
    JsonNode archs = root.get("architectures");
    if (archs == null || archs.isNull()) {
      throw new ModelFactsException(sourceName + ": missing field architectures (expected one of " + SUPPORTED + ")");
    }
    if (!archs.isArray() || archs.size() != 1 || !archs.get(0).isTextual()) {
      throw new ModelFactsException(sourceName + ": architectures must list exactly one class name, got " + archs);
    }
    String a = archs.get(0).asText();
    if (!SUPPORTED.contains(a)) {
      throw new UnsupportedArchitectureException(sourceName + ": architecture " + a
          + " is not supported by the Tensorlane runtime (supported: " + String.join(", ", SUPPORTED) + ")", a);
    }
    return a;
  }

  /** Field lookup in the language-model part of the config (text_config when nested), dtype also at the top. */
  private record Fields(JsonNode node, JsonNode root, String source, String prefix) {
    int requireInt(String name) {
      Integer v = optInt(name);
      if (v == null) {
        throw new ModelFactsException(source + ": missing field " + prefix + name + " (expected an integer)");
      }
      return v;
    }

    Integer optInt(String name) {
      JsonNode n = node.get(name);
      if (n == null || n.isNull()) {
        return null;
      }
      if (n.isIntegralNumber() && n.canConvertToInt() && n.intValue() > 0) {
        return n.intValue();
      }
      throw new ModelFactsException(source + ": " + prefix + name + " must be a positive integer, got " + n);
    }

    String dtype() {
      for (JsonNode where : List.of(node, root)) {
        for (String name : List.of("torch_dtype", "dtype")) {
          JsonNode n = where.get(name);
          if (n != null && !n.isNull()) {
            if (!n.isTextual()) {
              throw new ModelFactsException(source + ": " + name + " must be a string, got " + n);
            }
            String d = n.asText();
            return d.startsWith("torch.") ? d.substring("torch.".length()) : d;
          }
        }
      }
      throw new ModelFactsException(source + ": missing field torch_dtype (or dtype), e.g. bfloat16");
    }
  }
}
