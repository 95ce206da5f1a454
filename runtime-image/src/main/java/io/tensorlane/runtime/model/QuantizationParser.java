package io.tensorlane.runtime.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * config.json {@code quantization_config} to {@link Quantization}. Two formats are read; anything else ends with a
 * {@link ModelException} that names what was found (before any GPU memory is taken):
 * <ul>
 *   <li>{@code quant_method: "fp8"} (transformers' FineGrainedFP8Config, Qwen3-*-FP8, DeepSeek-V3): {@code fmt} e4m3,
 *       {@code weight_block_size} [128, 128] (block scales {@code weight_scale_inv}) or absent (one
 *       {@code weight_scale} per tensor), {@code activation_scheme} dynamic or static, {@code modules_to_not_convert}
 *       (or vLLM's {@code ignored_layers});</li>
 *   <li>{@code quant_method: "compressed-tensors"} with {@code format: "float-quantized"}: one config group targeting
 *       {@code Linear} whose weights are 8-bit floats, symmetric, static, strategy channel, tensor or block
 *       ({@code block_structure} [128, 128]), scales {@code weight_scale}; {@code ignore}; no output activations; a
 *       {@code kv_cache_scheme} only of static per-tensor 8-bit floats (the checkpoint's per-layer
 *       {@code k_scale}/{@code v_scale}, read by {@link KvScales} for an FP8 KV cache).</li>
 * </ul>
 */
final class QuantizationParser {
    private static final String SUPPORTED = "supported: quant_method fp8 (e4m3, weight_block_size [128, 128] or per "
            + "tensor) and compressed-tensors (format float-quantized, 8-bit float weights per channel, tensor or "
            + "128x128 block)";

    private QuantizationParser() {}

    /** {@code qc} is the {@code quantization_config} value; null or JSON null: not quantized. */
    static Quantization parse(JsonNode qc) {
        if (qc == null || qc.isNull()) {
            return Quantization.NONE;
        }
        if (!qc.isObject()) {
            throw new ModelException("quantization_config must be an object, got " + qc);
        }
        String method = text(qc, "quant_method");
        if (method == null) {
            throw new ModelException("quantization_config has no quant_method (" + SUPPORTED + ")");
        }
        return switch (method) {
            case "fp8" -> fp8(qc);
            case "compressed-tensors" -> compressedTensors(qc);
            default ->
                throw new ModelException(
                        "quantization_config.quant_method " + method + " is not supported (" + SUPPORTED + ")");
        };
    }

    private static Quantization fp8(JsonNode qc) {
        String fmt = text(qc, "fmt");
        if (fmt != null && !fmt.equals("e4m3")) {
            throw new ModelException("quantization_config.fmt " + fmt + " is not supported (FP8 weights in e4m3 only)");
        }
        String act = text(qc, "activation_scheme");
        if (act != null && !act.equals("dynamic") && !act.equals("static")) {
            throw new ModelException(
                    "quantization_config.activation_scheme " + act + " is not known (dynamic, static)");
        }
        List<String> skip = strings(qc, "modules_to_not_convert");
        skip.addAll(strings(qc, "ignored_layers"));
        JsonNode block = qc.get("weight_block_size");
        if (block == null || block.isNull()) {
            return new Quantization(Quantization.Method.FP8_TENSOR, "weight_scale", skip, false, "quant_method fp8");
        }
        checkBlock("quantization_config.weight_block_size", block);
        return new Quantization(Quantization.Method.FP8_BLOCK, "weight_scale_inv", skip, false, "quant_method fp8");
    }

    private static Quantization compressedTensors(JsonNode qc) {
        String where = "quantization_config";
        String format = text(qc, "format");
        if (!"float-quantized".equals(format)) {
            throw new ModelException(
                    where + ".format " + format + " is not supported (float-quantized FP8 only; " + SUPPORTED + ")");
        }
        JsonNode kv = qc.get("kv_cache_scheme");
        if (kv != null && !kv.isNull()) {
            kvCacheScheme(where + ".kv_cache_scheme", kv);
        }
        JsonNode groups = qc.get("config_groups");
        if (groups == null || !groups.isObject() || groups.size() != 1) {
            throw new ModelException(where + ".config_groups must hold exactly one group, got "
                    + (groups == null ? "none" : groups.size() + ": " + groups)
                    + " (one scheme for every linear layer is supported)");
        }
        Map.Entry<String, JsonNode> g = groups.fields().next();
        String gw = where + ".config_groups." + g.getKey();
        JsonNode group = g.getValue();
        List<String> targets = strings(group, "targets");
        if (!targets.equals(List.of("Linear"))) {
            throw new ModelException(gw + ".targets " + targets + " is not supported (exactly [\"Linear\"])");
        }
        JsonNode out = group.get("output_activations");
        if (out != null && !out.isNull()) {
            throw new ModelException(gw + ".output_activations is set; output quantization is not supported");
        }
        JsonNode in = group.get("input_activations");
        if (in != null && !in.isNull()) {
            floatEight(gw + ".input_activations", in);
        }
        JsonNode w = group.get("weights");
        if (w == null || !w.isObject()) {
            throw new ModelException(gw + ".weights is missing");
        }
        String ww = gw + ".weights";
        floatEight(ww, w);
        if (w.path("dynamic").asBoolean(false)) {
            throw new ModelException(ww + ".dynamic is true; weights must be quantized in the checkpoint");
        }
        if (!w.path("symmetric").asBoolean(true)) {
            throw new ModelException(
                    ww + ".symmetric is false; asymmetric FP8 weights (zero points) are not supported");
        }
        String strategy = text(w, "strategy");
        Quantization.Method m;
        if ("channel".equals(strategy)) {
            m = Quantization.Method.FP8_CHANNEL;
        } else if ("tensor".equals(strategy)) {
            m = Quantization.Method.FP8_TENSOR;
        } else if ("block".equals(strategy)) {
            checkBlock(ww + ".block_structure", w.get("block_structure"));
            m = Quantization.Method.FP8_BLOCK;
        } else {
            throw new ModelException(ww + ".strategy " + strategy + " is not supported (channel, tensor or block)");
        }
        return new Quantization(m, "weight_scale", strings(qc, "ignore"), true, "compressed-tensors");
    }

    /**
     * compressed-tensors' KV-cache scheme: static, symmetric, one FP8 scale per tensor (per layer's k and v, {@link
     * KvScales}); anything else (dynamic or per-head scales, integers) is refused.
     */
    private static void kvCacheScheme(String where, JsonNode kv) {
        floatEight(where, kv);
        String strategy = text(kv, "strategy");
        if ((strategy != null && !strategy.equals("tensor"))
                || kv.path("dynamic").asBoolean(false)
                || !kv.path("symmetric").asBoolean(true)) {
            throw new ModelException(where + " " + kv + " is not supported (static symmetric per-tensor FP8 "
                    + "scales only: strategy tensor, dynamic false)");
        }
    }

    /** Quantization args of 8-bit floats. */
    private static void floatEight(String where, JsonNode a) {
        String type = text(a, "type");
        int bits = a.path("num_bits").asInt(-1);
        if (!"float".equals(type) || bits != 8) {
            throw new ModelException(where + " is " + bits + "-bit " + type + "; only 8-bit float (FP8) is supported");
        }
    }

    private static void checkBlock(String where, JsonNode block) {
        if (block == null
                || !block.isArray()
                || block.size() != 2
                || block.get(0).asInt() != WeightType.BLOCK
                || block.get(1).asInt() != WeightType.BLOCK) {
            throw new ModelException(where + " " + block + " is not supported (only [" + WeightType.BLOCK + ", "
                    + WeightType.BLOCK + "] blocks)");
        }
    }

    private static String text(JsonNode o, String name) {
        JsonNode n = o.get(name);
        return n == null || n.isNull() ? null : n.asText();
    }

    private static List<String> strings(JsonNode o, String name) {
        List<String> out = new ArrayList<>();
        JsonNode n = o.get(name);
        if (n == null || n.isNull()) {
            return out;
        }
        if (!n.isArray()) {
            throw new ModelException("quantization_config " + name + " must be a list, got " + n);
        }
        for (Iterator<JsonNode> it = n.elements(); it.hasNext(); ) {
            out.add(it.next().asText());
        }
        return out;
    }
}
