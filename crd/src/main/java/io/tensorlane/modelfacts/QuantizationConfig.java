package io.tensorlane.modelfacts;

import com.fasterxml.jackson.databind.JsonNode;
import io.tensorlane.api.v1alpha1.ModelQuantization;
import io.tensorlane.api.v1alpha1.ModelQuantization.Weights;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What config.json's {@code quantization_config} says about the linear layers' weights, as far as planning needs it:
 * whether they are FP8 (1 byte per element plus scales; the activations and the KV cache stay in the model's {@code
 * dtype}) and in which layout. Read leniently: the weight bytes always come from the safetensors headers, so a method
 * or scheme not read here is {@link Weights#Other}, never an error (the engine that loads the weights judges the full
 * layout itself). Pure.
 *
 * <ul>
 *   <li>{@code quant_method: "fp8"} (transformers' FineGrainedFP8Config; Qwen3-*-FP8, DeepSeek-V3): {@code
 *       weight_block_size [128, 128]} is {@link Weights#FP8Block}, no block size one scale per tensor;
 *   <li>{@code quant_method: "compressed-tensors"} (the "FP8-dynamic" checkpoints): every config group's {@code weights}
 *       8-bit {@code float}, strategy {@code channel}, {@code tensor} or {@code block} ({@code block_structure});
 *   <li>{@code quant_method: "fbgemm_fp8"} (meta-llama's *-FP8 checkpoints): FP8 with one scale per output row.
 * </ul>
 */
public final class QuantizationConfig {
    private QuantizationConfig() {}

    /** The quantization of a parsed config.json, or null when it has no {@code quantization_config}. */
    public static ModelQuantization read(ConfigJson config) {
        JsonNode qc = config.fieldOrTop("quantization_config");
        if (qc == null) {
            return null;
        }
        if (!qc.isObject()) {
            return of("unknown", Weights.Other, "quantization_config is not an object");
        }
        String method = text(qc, "quant_method");
        if (method == null) {
            return of("unknown", Weights.Other, "quantization_config names no quant_method");
        }
        return switch (method.toLowerCase(Locale.ROOT)) {
            case "fp8" -> fp8(method, qc);
            case "fbgemm_fp8" -> of(method, Weights.FP8Channel, "fp8 per-channel");
            case "compressed-tensors" -> compressedTensors(method, qc);
            default -> of(method, Weights.Other, method + " (not FP8)");
        };
    }

    private static ModelQuantization fp8(String method, JsonNode qc) {
        JsonNode size = qc.get("weight_block_size");
        if (size == null || size.isNull()) {
            return of(method, Weights.FP8Tensor, "fp8 per-tensor");
        }
        List<Integer> block = ints(size);
        return block != null && block.size() == 2
                ? of(method, Weights.FP8Block, "fp8 block " + block.get(0) + "x" + block.get(1))
                : of(method, Weights.Other, "fp8 with weight_block_size " + qc.get("weight_block_size"));
    }

    /** FP8 when every config group stores its weights as 8-bit floats with one strategy. */
    private static ModelQuantization compressedTensors(String method, JsonNode qc) {
        JsonNode groups = qc.get("config_groups");
        if (groups == null || !groups.isObject() || groups.isEmpty()) {
            return of(method, Weights.Other, method + " without config_groups");
        }
        String strategy = null;
        List<Integer> block = null;
        for (JsonNode g : groups) {
            JsonNode w = g.get("weights");
            if (w == null
                    || !w.isObject()
                    || !"float".equals(text(w, "type"))
                    || w.path("num_bits").asInt() != 8) {
                return of(method, Weights.Other, method + " (" + text(qc, "format") + ", not FP8 weights)");
            }
            String s = text(w, "strategy");
            if (strategy != null && !strategy.equals(s)) {
                return of(method, Weights.Other, method + " with FP8 weights of strategies " + strategy + " and " + s);
            }
            strategy = s;
            block = ints(w.get("block_structure"));
        }
        if ("channel".equals(strategy)) {
            return of(method, Weights.FP8Channel, "fp8 per-channel");
        }
        if ("tensor".equals(strategy)) {
            return of(method, Weights.FP8Tensor, "fp8 per-tensor");
        }
        if ("block".equals(strategy) && block != null && block.size() == 2) {
            return of(method, Weights.FP8Block, "fp8 block " + block.get(0) + "x" + block.get(1));
        }
        return of(method, Weights.Other, method + " with FP8 weights of strategy " + strategy);
    }

    private static ModelQuantization of(String method, Weights weights, String format) {
        ModelQuantization q = new ModelQuantization();
        q.method = method;
        q.weights = weights;
        q.format = format;
        return q;
    }

    private static String text(JsonNode o, String name) {
        JsonNode n = o.get(name);
        return n == null || n.isNull() || !n.isValueNode() ? null : n.asText();
    }

    /** A list of positive integers, or null when {@code n} is anything else (or absent). */
    private static List<Integer> ints(JsonNode n) {
        if (n == null || !n.isArray()) {
            return null;
        }
        List<Integer> out = new ArrayList<>();
        for (JsonNode d : n) {
            if (!d.canConvertToInt() || !d.isIntegralNumber() || d.intValue() <= 0) {
                return null;
            }
            out.add(d.intValue());
        }
        return out;
    }
}
