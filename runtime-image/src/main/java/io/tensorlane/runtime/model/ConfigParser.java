package io.tensorlane.runtime.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** config.json to {@link ModelConfig}: field lookup, defaults per architecture, and both rope config styles. */
final class ConfigParser {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  static final double DEFAULT_ROPE_THETA = 10000.0;

  private final JsonNode root;
  private final String source;

  private ConfigParser(JsonNode root, String source) {
    this.root = root;
    this.source = source;
  }

  static ModelConfig parse(String json, String sourceName) {
    JsonNode root;
    try {
      root = MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new ModelException(sourceName + ": not valid JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new ModelException(sourceName + ": expected a JSON object");
    }
    ConfigParser p = new ConfigParser(root, sourceName);
    try {
      return p.build();
    } catch (ModelException e) {
      if (e.getMessage().startsWith(sourceName + ":")) {
        throw e;
      }
      throw new ModelException(sourceName + ": " + e.getMessage(), e);
    }
  }

  private ModelConfig build() {
    Architecture arch = architecture();
    int hidden = requireInt("hidden_size");
    int heads = requireInt("num_attention_heads");
    int kvHeads = optInt("num_key_value_heads", heads);
    Integer headDimField = optInteger("head_dim");
    int headDim;
    if (headDimField != null) {
      headDim = headDimField;
    } else {
      if (heads <= 0 || hidden % heads != 0) {
        throw new ModelException("hidden_size " + hidden + " is not a multiple of num_attention_heads " + heads
            + " and there is no head_dim");
      }
      headDim = hidden / heads;
    }
    boolean attentionBias = optBool("attention_bias", false);
    boolean qkvBias = arch == Architecture.QWEN2 || attentionBias;
    boolean qkNorm = arch == Architecture.QWEN3;
    Integer slidingWindow = null;
    if (arch == Architecture.MISTRAL) {
      slidingWindow = optInteger("sliding_window");
    } else if ((arch == Architecture.QWEN2 || arch == Architecture.QWEN3) && optBool("use_sliding_window", false)) {
      slidingWindow = optInteger("sliding_window");
      if (slidingWindow == null) {
        throw new ModelException("use_sliding_window is true but sliding_window is missing");
      }
    }
    RopeSpec rope = rope();
    return new ModelConfig(arch, hidden, requireInt("intermediate_size"), requireInt("num_hidden_layers"), heads, kvHeads,
        headDim, requireInt("vocab_size"), requireDouble("rms_norm_eps"), rope.theta, rope.scaling,
        requireInt("max_position_embeddings"), optBool("tie_word_embeddings", false), qkvBias, qkNorm, dtype(),
        slidingWindow, optInteger("bos_token_id"), eos());
  }

  private Architecture architecture() {
    JsonNode archs = field("architectures");
    if (archs != null) {
      if (archs.isTextual()) {
        return Architecture.fromHf(archs.asText());
      }
      if (!archs.isArray() || archs.isEmpty() || !archs.get(0).isTextual()) {
        throw new ModelException("architectures must be a non-empty list of strings, got " + archs);
      }
      if (archs.size() > 1) {
        throw new ModelException("architectures lists " + archs.size() + " classes " + archs + "; expected one of "
            + Architecture.supported());
      }
      return Architecture.fromHf(archs.get(0).asText());
    }
    JsonNode modelType = field("model_type");
    if (modelType != null && modelType.isTextual()) {
      return Architecture.fromModelType(modelType.asText());
    }
    throw new ModelException("missing field architectures (expected one of " + Architecture.supported() + ")");
  }

  private WeightDType dtype() {
    JsonNode d = field("torch_dtype");
    String name = "torch_dtype";
    if (d == null) {
      d = field("dtype");
      name = "dtype";
    }
    if (d == null) {
      throw new ModelException("missing field torch_dtype (or dtype): expected bfloat16 or float16");
    }
    if (!d.isTextual()) {
      throw new ModelException(name + " must be a string, got " + d);
    }
    return WeightDType.fromHf(d.asText());
  }

  private List<Integer> eos() {
    JsonNode e = field("eos_token_id");
    List<Integer> ids = new ArrayList<>();
    if (e == null) {
      return ids;
    }
    if (e.isArray()) {
      for (JsonNode n : e) {
        ids.add(asInt("eos_token_id", n));
      }
    } else {
      ids.add(asInt("eos_token_id", e));
    }
    return ids;
  }

  private record RopeSpec(double theta, RopeScaling scaling) {}

  /** transformers 5.x {@code rope_parameters} when present, else 4.x {@code rope_theta} + {@code rope_scaling}. */
  private RopeSpec rope() {
    checkPartialRotary("partial_rotary_factor", field("partial_rotary_factor"));
    JsonNode params = field("rope_parameters");
    if (params != null) {
      if (!params.isObject()) {
        throw new ModelException("rope_parameters must be an object, got " + params);
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = params.fields(); it.hasNext();) {
        Map.Entry<String, JsonNode> f = it.next();
        if (f.getValue().isObject()) {
          throw new ModelException("rope_parameters." + f.getKey() + ": per-layer-type rope parameters are not supported");
        }
      }
      JsonNode theta = params.get("rope_theta");
      double base = theta != null && !theta.isNull() ? asDouble("rope_parameters.rope_theta", theta)
          : optDouble("rope_theta", DEFAULT_ROPE_THETA);
      return new RopeSpec(base, scaling("rope_parameters", params));
    }
    double base = optDouble("rope_theta", DEFAULT_ROPE_THETA);
    JsonNode scaling = field("rope_scaling");
    if (scaling == null) {
      return new RopeSpec(base, null);
    }
    if (!scaling.isObject()) {
      throw new ModelException("rope_scaling must be an object or null, got " + scaling);
    }
    return new RopeSpec(base, scaling("rope_scaling", scaling));
  }

  private RopeScaling scaling(String where, JsonNode obj) {
    checkPartialRotary(where + ".partial_rotary_factor", obj.get("partial_rotary_factor"));
    JsonNode t = obj.get("rope_type");
    if (t == null || t.isNull()) {
      t = obj.get("type");
    }
    String type = t == null || t.isNull() ? "default" : t.asText();
    switch (type) {
      case "default":
        return null;
      case RopeScaling.LINEAR:
        return RopeScaling.linear(asDouble(where + ".factor", need(where, obj, "factor")));
      case RopeScaling.LLAMA3:
        return RopeScaling.llama3(asDouble(where + ".factor", need(where, obj, "factor")),
            asDouble(where + ".low_freq_factor", need(where, obj, "low_freq_factor")),
            asDouble(where + ".high_freq_factor", need(where, obj, "high_freq_factor")),
            asInt(where + ".original_max_position_embeddings", need(where, obj, "original_max_position_embeddings")));
      default:
        throw new ModelException(where + ": rope type " + type + " is not supported (default, linear or llama3)");
    }
  }

  private static JsonNode need(String where, JsonNode obj, String name) {
    JsonNode n = obj.get(name);
    if (n == null || n.isNull()) {
      throw new ModelException("missing field " + where + "." + name);
    }
    return n;
  }

  private static void checkPartialRotary(String name, JsonNode n) {
    if (n != null && !n.isNull() && asDouble(name, n) != 1.0) {
      throw new ModelException(name + " " + n + " is not supported (rotary embedding over the whole head only)");
    }
  }

  // ---- field access -------------------------------------------------------------------------------------------

  /** The field, or null when absent or JSON null. */
  private JsonNode field(String name) {
    JsonNode n = root.get(name);
    return n == null || n.isNull() ? null : n;
  }

  private int requireInt(String name) {
    JsonNode n = field(name);
    if (n == null) {
      throw new ModelException("missing field " + name + " (expected an integer)");
    }
    return asInt(name, n);
  }

  private int optInt(String name, int dflt) {
    Integer v = optInteger(name);
    return v == null ? dflt : v;
  }

  private Integer optInteger(String name) {
    JsonNode n = field(name);
    return n == null ? null : asInt(name, n);
  }

  private double requireDouble(String name) {
    JsonNode n = field(name);
    if (n == null) {
      throw new ModelException("missing field " + name + " (expected a number)");
    }
    return asDouble(name, n);
  }

  private double optDouble(String name, double dflt) {
    JsonNode n = field(name);
    return n == null ? dflt : asDouble(name, n);
  }

  private boolean optBool(String name, boolean dflt) {
    JsonNode n = field(name);
    if (n == null) {
      return dflt;
    }
    if (!n.isBoolean()) {
      throw new ModelException(name + " must be true or false, got " + n);
    }
    return n.booleanValue();
  }

  static int asInt(String name, JsonNode n) {
    if (n.isIntegralNumber() && n.canConvertToInt()) {
      return n.intValue();
    }
    if (n.isFloatingPointNumber() && n.doubleValue() == Math.rint(n.doubleValue()) && Math.abs(n.doubleValue()) < Integer.MAX_VALUE) {
      return (int) n.doubleValue();
    }
    throw new ModelException(name + " must be an integer, got " + n);
  }

  static double asDouble(String name, JsonNode n) {
    if (!n.isNumber()) {
      throw new ModelException(name + " must be a number, got " + n);
    }
    return n.doubleValue();
  }
}
