package io.tensorlane.modelfacts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;

/**
 * A Hugging Face {@code config.json}, parsed once: the one place its JSON is read and its fields are looked up and
 * typed. {@link ConfigFacts} (what the operator plans from) and the runtime's {@code ModelConfig} (what the engine runs
 * from: ConfigFacts plus the engine-only fields, read through the same instance) are both built on it. Fields of the
 * language model are looked up under {@code text_config} when the config nests it there (multimodal wrappers), else at
 * the top. Every error starts with the file as the user knows it and names the config.json field.
 */
public final class ConfigJson {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final JsonNode root;
    private final JsonNode node;
    private final String source;
    private final String prefix;

    private ConfigJson(JsonNode root, String source) {
        this.root = root;
        JsonNode text = root.get("text_config");
        boolean nested = text != null && text.isObject();
        this.node = nested ? text : root;
        this.prefix = nested ? "text_config." : "";
        this.source = source;
    }

    /**
     * @param sourceName the file as the user knows it (e.g. hf://org/name@sha/config.json); starts every error message
     * @throws ModelFactsException not JSON, or not a JSON object
     */
    public static ConfigJson parse(String json, String sourceName) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new ModelFactsException(sourceName + ": not valid JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new ModelFactsException(sourceName + ": expected a JSON object");
        }
        return new ConfigJson(root, sourceName);
    }

    /** The file as the user knows it. */
    public String source() {
        return source;
    }

    /** An error about this file: the message is prefixed with {@link #source()}. */
    public ModelFactsException error(String message) {
        return new ModelFactsException(source + ": " + message);
    }

    /**
     * The Hugging Face class named by {@code architectures} (a list of exactly one name, or a plain string), or, when
     * that is absent, the class of the {@code model_type} (for the types in {@link ConfigFacts#MODEL_TYPES}). Whether it
     * is supported is the caller's question.
     */
    public String architecture() {
        JsonNode archs = root.get("architectures");
        if (archs != null && !archs.isNull()) {
            if (archs.isTextual()) {
                return archs.asText();
            }
            if (!archs.isArray() || archs.size() != 1 || !archs.get(0).isTextual()) {
                throw error("architectures must list exactly one class name, got " + archs);
            }
            return archs.get(0).asText();
        }
        JsonNode modelType = root.get("model_type");
        if (modelType != null && modelType.isTextual()) {
            String a = ConfigFacts.MODEL_TYPES.get(modelType.asText());
            if (a == null) {
                throw error("model_type " + modelType.asText() + " is not supported (supported: "
                        + String.join(", ", ConfigFacts.MODEL_TYPES.keySet()) + ")");
            }
            return a;
        }
        throw error("missing field architectures (expected one of " + String.join(", ", ConfigFacts.READ) + ")");
    }

    /** {@code torch_dtype} (transformers 4) or {@code dtype} (5), language model first, as written without "torch.". */
    public String dtype() {
        for (JsonNode where : List.of(node, root)) {
            for (String name : List.of("torch_dtype", "dtype")) {
                JsonNode n = where.get(name);
                if (n != null && !n.isNull()) {
                    if (!n.isTextual()) {
                        throw error(name + " must be a string, got " + n);
                    }
                    String d = n.asText();
                    return d.startsWith("torch.") ? d.substring("torch.".length()) : d;
                }
            }
        }
        throw error("missing field torch_dtype (or dtype), e.g. bfloat16");
    }

    /** A field of the language model, or null when it is absent or JSON null. */
    public JsonNode field(String name) {
        JsonNode n = node.get(name);
        return n == null || n.isNull() ? null : n;
    }

    /**
     * A field of the language model, else of the top level (where multimodal wrappers keep e.g. {@code
     * quantization_config}); null when absent or JSON null in both.
     */
    public JsonNode fieldOrTop(String name) {
        JsonNode n = field(name);
        if (n == null) {
            n = root.get(name);
        }
        return n == null || n.isNull() ? null : n;
    }

    public int requireInt(String name) {
        JsonNode n = field(name);
        if (n == null) {
            throw error("missing field " + prefix + name + " (expected an integer)");
        }
        return asInt(prefix + name, n);
    }

    /** The integer, or null when the field is absent. */
    public Integer optInt(String name) {
        JsonNode n = field(name);
        return n == null ? null : asInt(prefix + name, n);
    }

    /** An integer field that must be > 0. */
    public int requirePositive(String name) {
        return positive(name, requireInt(name));
    }

    /** An optional integer field that must be > 0 when present. */
    public Integer optPositive(String name) {
        Integer v = optInt(name);
        return v == null ? null : positive(name, v);
    }

    private int positive(String name, int v) {
        if (v <= 0) {
            throw error(prefix + name + " must be > 0, got " + v);
        }
        return v;
    }

    public double requireDouble(String name) {
        JsonNode n = field(name);
        if (n == null) {
            throw error("missing field " + prefix + name + " (expected a number)");
        }
        return asDouble(prefix + name, n);
    }

    public double optDouble(String name, double dflt) {
        JsonNode n = field(name);
        return n == null ? dflt : asDouble(prefix + name, n);
    }

    public boolean optBool(String name, boolean dflt) {
        JsonNode n = field(name);
        if (n == null) {
            return dflt;
        }
        if (!n.isBoolean()) {
            throw error(prefix + name + " must be true or false, got " + n);
        }
        return n.booleanValue();
    }

    /** An integer value (an integral number, or a float with no fraction such as 4096.0) of the field {@code name}. */
    public int asInt(String name, JsonNode n) {
        if (n.isIntegralNumber() && n.canConvertToInt()) {
            return n.intValue();
        }
        if (n.isFloatingPointNumber()
                && n.doubleValue() == Math.rint(n.doubleValue())
                && Math.abs(n.doubleValue()) < Integer.MAX_VALUE) {
            return (int) n.doubleValue();
        }
        throw error(name + " must be an integer, got " + n);
    }

    /** A number value of the field {@code name}. */
    public double asDouble(String name, JsonNode n) {
        if (!n.isNumber()) {
            throw error(name + " must be a number, got " + n);
        }
        return n.doubleValue();
    }
}
