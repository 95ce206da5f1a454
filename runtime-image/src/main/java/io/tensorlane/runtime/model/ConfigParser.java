package io.tensorlane.runtime.model;

import com.fasterxml.jackson.databind.JsonNode;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.modelfacts.ConfigFacts;
import io.tensorlane.modelfacts.ConfigJson;
import io.tensorlane.modelfacts.ModelFactsException;
import io.tensorlane.modelfacts.MoeConfig;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * config.json to {@link ModelConfig}: one parse ({@link ConfigJson}, crd module) gives the {@link ConfigFacts} the
 * operator plans from (architecture, geometry, context length, dtype); the engine-only fields (norm epsilon, rope,
 * tied embeddings, biases, sliding window, special tokens) are read here from the same parse.
 */
final class ConfigParser {
    static final double DEFAULT_ROPE_THETA = 10000.0;

    private final ConfigJson c;

    private ConfigParser(ConfigJson c) {
        this.c = c;
    }

    static ModelConfig parse(String json, String sourceName) {
        try {
            return new ConfigParser(ConfigJson.parse(json, sourceName)).build();
        } catch (ModelFactsException e) {
            throw new ModelException(e.getMessage(), e);
        } catch (ModelException e) {
            if (e.getMessage().startsWith(sourceName + ":")) {
                throw e;
            }
            throw new ModelException(sourceName + ": " + e.getMessage(), e);
        }
    }

    private ModelConfig build() {
        Architecture arch = Architecture.fromHf(c.architecture());
        ConfigFacts facts = ConfigFacts.of(c);
        ModelGeometry g = facts.geometry();
        boolean qkvBias = arch.attention() == Architecture.Attention.QKV_BIAS || c.optBool("attention_bias", false);
        boolean qkNorm = arch.attention() == Architecture.Attention.QK_NORM;
        Integer slidingWindow = switch (arch.window()) {
            case NONE -> null;
            case ALWAYS -> c.optInt("sliding_window");
            case OPT_IN -> {
                if (!c.optBool("use_sliding_window", false)) {
                    yield null;
                }
                Integer w = c.optInt("sliding_window");
                if (w == null) {
                    throw new ModelException("use_sliding_window is true but sliding_window is missing");
                }
                yield w;
            }
        };
        MoeSpec moe = null;
        if (arch.experts() != null) {
            String norm = arch.experts().normTopKField();
            moe = new MoeSpec(MoeConfig.read(c, arch.hfName(), g.layers), norm == null || c.optBool(norm, false));
        }
        RopeSpec rope = rope();
        return new ModelConfig(
                arch,
                g.hiddenSize,
                g.intermediateSize,
                g.layers,
                g.attentionHeads,
                g.kvHeads,
                g.headDim,
                g.vocabSize,
                c.requireDouble("rms_norm_eps"),
                rope.theta,
                rope.scaling,
                facts.maxPositionEmbeddings(),
                c.optBool("tie_word_embeddings", false),
                qkvBias,
                qkNorm,
                WeightDType.fromHf(facts.dtype()),
                slidingWindow,
                c.optInt("bos_token_id"),
                eos(),
                QuantizationParser.parse(c.field("quantization_config")),
                moe);
    }

    private List<Integer> eos() {
        JsonNode e = c.field("eos_token_id");
        List<Integer> ids = new ArrayList<>();
        if (e == null) {
            return ids;
        }
        if (e.isArray()) {
            for (JsonNode n : e) {
                ids.add(c.asInt("eos_token_id", n));
            }
        } else {
            ids.add(c.asInt("eos_token_id", e));
        }
        return ids;
    }

    private record RopeSpec(double theta, RopeScaling scaling) {}

    /** transformers 5.x {@code rope_parameters} when present, else 4.x {@code rope_theta} + {@code rope_scaling}. */
    private RopeSpec rope() {
        checkPartialRotary("partial_rotary_factor", c.field("partial_rotary_factor"));
        JsonNode params = c.field("rope_parameters");
        if (params != null) {
            if (!params.isObject()) {
                throw new ModelException("rope_parameters must be an object, got " + params);
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = params.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                if (f.getValue().isObject()) {
                    throw new ModelException(
                            "rope_parameters." + f.getKey() + ": per-layer-type rope parameters are not supported");
                }
            }
            JsonNode theta = params.get("rope_theta");
            double base = theta != null && !theta.isNull()
                    ? c.asDouble("rope_parameters.rope_theta", theta)
                    : c.optDouble("rope_theta", DEFAULT_ROPE_THETA);
            return new RopeSpec(base, scaling("rope_parameters", params));
        }
        double base = c.optDouble("rope_theta", DEFAULT_ROPE_THETA);
        JsonNode scaling = c.field("rope_scaling");
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
                return RopeScaling.linear(c.asDouble(where + ".factor", need(where, obj, "factor")));
            case RopeScaling.LLAMA3:
                return RopeScaling.llama3(
                        c.asDouble(where + ".factor", need(where, obj, "factor")),
                        c.asDouble(where + ".low_freq_factor", need(where, obj, "low_freq_factor")),
                        c.asDouble(where + ".high_freq_factor", need(where, obj, "high_freq_factor")),
                        c.asInt(
                                where + ".original_max_position_embeddings",
                                need(where, obj, "original_max_position_embeddings")));
            default:
                throw new ModelException(
                        where + ": rope type " + type + " is not supported (default, linear or llama3)");
        }
    }

    private static JsonNode need(String where, JsonNode obj, String name) {
        JsonNode n = obj.get(name);
        if (n == null || n.isNull()) {
            throw new ModelException("missing field " + where + "." + name);
        }
        return n;
    }

    private void checkPartialRotary(String name, JsonNode n) {
        if (n != null && !n.isNull() && c.asDouble(name, n) != 1.0) {
            throw new ModelException(name + " " + n + " is not supported (rotary embedding over the whole head only)");
        }
    }
}
