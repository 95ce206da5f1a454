package io.tensorlane.testkit.hub;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Checkpoints for the {@link LocalHub}: a small Llama-style one with real data ({@link #tiny}), and header-only
 * "virtual" checkpoints of real models ({@link #llama}): config.json and safetensors files whose headers list every
 * tensor with its real shape and dtype but carry no data, which is all that inspection reads.
 */
public final class Checkpoints {
    public static final int LAYERS = 2;
    public static final int HIDDEN = 64;
    public static final int HEADS = 4;
    public static final int KV_HEADS = 2;
    public static final int VOCAB = 128;
    public static final int INTERMEDIATE = 128;
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Checkpoints() {}

    /** config.json of the tiny checkpoint. */
    public static byte[] config(String architecture) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("architectures", List.of(architecture));
        c.put("model_type", "llama");
        c.put("hidden_size", HIDDEN);
        c.put("intermediate_size", INTERMEDIATE);
        c.put("num_hidden_layers", LAYERS);
        c.put("num_attention_heads", HEADS);
        c.put("num_key_value_heads", KV_HEADS);
        c.put("vocab_size", VOCAB);
        c.put("max_position_embeddings", 256);
        c.put("rms_norm_eps", 1e-5);
        c.put("torch_dtype", "bfloat16");
        try {
            return MAPPER.writeValueAsBytes(c);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A safetensors file (header + zero data) holding {@code tensors}: name → [dtype, dims...]. */
    public static byte[] safetensors(Map<String, List<Object>> tensors) {
        byte[] h = header(tensors);
        long data = tensors.values().stream().mapToLong(Checkpoints::bytes).sum();
        return java.util.Arrays.copyOf(h, Math.toIntExact(h.length + data)); // the data: zeros
    }

    /** Two shards: embeddings + layer 0 in the first, layer 1 + norm + lm_head in the second (BF16, one F32 norm). */
    public static Map<String, byte[]> tiny(String architecture) {
        Map<String, byte[]> f = new LinkedHashMap<>();
        f.put("config.json", config(architecture));
        f.put("tokenizer.json", "{}".getBytes(StandardCharsets.UTF_8));
        f.put(
                "model-00001-of-00002.safetensors",
                safetensors(Map.of(
                        "model.embed_tokens.weight", List.of("BF16", VOCAB, HIDDEN),
                        "model.layers.0.mlp.up_proj.weight", List.of("BF16", INTERMEDIATE, HIDDEN))));
        f.put(
                "model-00002-of-00002.safetensors",
                safetensors(Map.of(
                        "model.layers.1.mlp.up_proj.weight", List.of("BF16", INTERMEDIATE, HIDDEN),
                        "model.norm.weight", List.of("F32", HIDDEN),
                        "lm_head.weight", List.of("BF16", VOCAB, HIDDEN))));
        return f;
    }

    /** BF16 bytes of {@link #tiny}: embeddings, two up_proj, lm_head. */
    public static final long BF16_BYTES = 2L * (VOCAB * HIDDEN * 2 + INTERMEDIATE * HIDDEN * 2);
    /** F32 bytes: the norm. */
    public static final long F32_BYTES = 4L * HIDDEN;

    /** Geometry of a Llama-family model, as in its config.json. */
    public record Llama(
            int layers,
            int hidden,
            int heads,
            int kvHeads,
            int vocab,
            int intermediate,
            int maxPositions,
            boolean tiedEmbeddings) {
        public int headDim() {
            return hidden / heads;
        }
    }

    /**
     * How the decoder layers' linear weights of a header-only checkpoint are stored; embeddings, norms and lm_head stay
     * BF16 in every layout, and config.json's dtype stays bfloat16 (as in the published FP8 checkpoints).
     */
    public enum Weights {
        /** BF16 throughout, no quantization_config. */
        BF16,
        /**
         * F8_E4M3 with an F32 {@code weight_scale} of shape [out, 1]; {@code quant_method: compressed-tensors}, format
         * float-quantized, strategy channel (the "FP8-dynamic" checkpoints).
         */
        FP8_CHANNEL,
        /** The same tensors with {@code quant_method: fbgemm_fp8} (meta-llama's *-FP8 checkpoints). */
        FP8_FBGEMM,
        /**
         * F8_E4M3 with an F32 {@code weight_scale_inv} of shape [⌈out/128⌉, ⌈in/128⌉]; {@code quant_method: fp8},
         * {@code weight_block_size: [128, 128]} (Qwen3-*-FP8, DeepSeek-V3, transformers' FineGrainedFP8Config).
         */
        FP8_BLOCK;

        boolean fp8() {
            return this != BF16;
        }
    }

    /** Rows and columns of one scale block of {@link Weights#FP8_BLOCK}. */
    public static final int BLOCK = 128;

    /** config.json's {@code quantization_config} of a layout; null for BF16. */
    static Map<String, Object> quantizationConfig(Weights w) {
        Map<String, Object> q = new LinkedHashMap<>();
        switch (w) {
            case BF16 -> {
                return null;
            }
            case FP8_CHANNEL -> {
                q.put("quant_method", "compressed-tensors");
                q.put("format", "float-quantized");
                Map<String, Object> weights = ordered(
                        "num_bits", 8, "type", "float", "strategy", "channel", "symmetric", true, "dynamic", false);
                Map<String, Object> input = ordered(
                        "num_bits", 8, "type", "float", "strategy", "token", "symmetric", true, "dynamic", true);
                q.put(
                        "config_groups",
                        ordered(
                                "group_0",
                                ordered("targets", List.of("Linear"), "weights", weights, "input_activations", input)));
                q.put("ignore", List.of("lm_head"));
            }
            case FP8_FBGEMM -> {
                q.put("quant_method", "fbgemm_fp8");
                q.put("activation_scheme", "dynamic");
                q.put("modules_to_not_convert", List.of("lm_head"));
            }
            case FP8_BLOCK -> {
                q.put("quant_method", "fp8");
                q.put("fmt", "e4m3");
                q.put("activation_scheme", "dynamic");
                q.put("weight_block_size", List.of(BLOCK, BLOCK));
                q.put("modules_to_not_convert", List.of("lm_head"));
            }
        }
        return q;
    }

    /** A map of {@code key, value, key, value, ...} in that order (config.json's bytes do not change between runs). */
    private static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    /**
     * A header-only checkpoint of a Llama model: config.json plus safetensors files of {@code layersPerFile} layers each,
     * the decoder layers' linear weights stored as {@code weights} says.
     */
    public static Map<String, byte[]> llama(Llama g, Weights weights, int layersPerFile) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("architectures", List.of("LlamaForCausalLM"));
        c.put("model_type", "llama");
        c.put("hidden_size", g.hidden());
        c.put("intermediate_size", g.intermediate());
        c.put("num_hidden_layers", g.layers());
        c.put("num_attention_heads", g.heads());
        c.put("num_key_value_heads", g.kvHeads());
        c.put("head_dim", g.headDim());
        c.put("vocab_size", g.vocab());
        c.put("max_position_embeddings", g.maxPositions());
        c.put("rms_norm_eps", 1e-5);
        c.put("rope_theta", 500000.0);
        c.put("tie_word_embeddings", g.tiedEmbeddings());
        c.put("torch_dtype", "bfloat16");
        if (weights.fp8()) {
            c.put("quantization_config", quantizationConfig(weights));
        }
        Map<String, byte[]> files = new LinkedHashMap<>();
        try {
            files.put("config.json", MAPPER.writeValueAsBytes(c));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        int n = (g.layers() + layersPerFile - 1) / layersPerFile;
        String total = String.format("%05d", n);
        for (int f = 0; f < n; f++) {
            Map<String, List<Object>> t = new LinkedHashMap<>();
            if (f == 0) {
                t.put("model.embed_tokens.weight", List.of("BF16", g.vocab(), g.hidden()));
            }
            for (int l = f * layersPerFile; l < Math.min(g.layers(), (f + 1) * layersPerFile); l++) {
                String p = "model.layers." + l + ".";
                int kv = g.kvHeads() * g.headDim();
                linear(t, p + "self_attn.q_proj", g.hidden(), g.hidden(), weights);
                linear(t, p + "self_attn.k_proj", kv, g.hidden(), weights);
                linear(t, p + "self_attn.v_proj", kv, g.hidden(), weights);
                linear(t, p + "self_attn.o_proj", g.hidden(), g.hidden(), weights);
                linear(t, p + "mlp.gate_proj", g.intermediate(), g.hidden(), weights);
                linear(t, p + "mlp.up_proj", g.intermediate(), g.hidden(), weights);
                linear(t, p + "mlp.down_proj", g.hidden(), g.intermediate(), weights);
                t.put(p + "input_layernorm.weight", List.of("BF16", g.hidden()));
                t.put(p + "post_attention_layernorm.weight", List.of("BF16", g.hidden()));
            }
            if (f == n - 1) {
                t.put("model.norm.weight", List.of("BF16", g.hidden()));
                if (!g.tiedEmbeddings()) {
                    t.put("lm_head.weight", List.of("BF16", g.vocab(), g.hidden()));
                }
            }
            files.put("model-" + String.format("%05d", f + 1) + "-of-" + total + ".safetensors", header(t));
        }
        return files;
    }

    static void linear(Map<String, List<Object>> t, String name, int out, int in, Weights w) {
        t.put(name + ".weight", List.of(w.fp8() ? "F8_E4M3" : "BF16", out, in));
        if (w == Weights.FP8_BLOCK) {
            t.put(name + ".weight_scale_inv", List.of("F32", (out + BLOCK - 1) / BLOCK, (in + BLOCK - 1) / BLOCK));
        } else if (w.fp8()) {
            t.put(name + ".weight_scale", List.of("F32", out, 1));
        }
    }

    /** The 8-byte length and the header of a safetensors file listing {@code tensors}, without their data. */
    public static byte[] header(Map<String, List<Object>> tensors) {
        Map<String, Object> header = new LinkedHashMap<>();
        header.put("__metadata__", Map.of("format", "pt"));
        long offset = 0;
        for (var e : tensors.entrySet()) {
            long n = bytes(e.getValue());
            header.put(
                    e.getKey(),
                    Map.of(
                            "dtype",
                            e.getValue().get(0),
                            "shape",
                            e.getValue().subList(1, e.getValue().size()),
                            "data_offsets",
                            List.of(offset, offset + n)));
            offset += n;
        }
        try {
            byte[] h = MAPPER.writeValueAsBytes(header);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            out.write(ByteBuffer.allocate(8)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(h.length)
                    .array());
            out.write(h);
            return out.toByteArray();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Bytes of a tensor given as [dtype, dims...] (F32 4, F8_E4M3 1, BF16/F16 2). */
    private static long bytes(List<Object> tensor) {
        long n = switch ((String) tensor.get(0)) {
            case "F32" -> 4;
            case "F8_E4M3" -> 1;
            default -> 2;
        };
        for (Object d : tensor.subList(1, tensor.size())) {
            n *= ((Number) d).longValue();
        }
        return n;
    }
}
