package io.tensorlane.testkit.hub;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.testkit.hub.Checkpoints.Weights;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Header-only checkpoints of Mixture-of-Experts models in the Hugging Face per-expert layout, as {@link
 * Checkpoints#llama} makes them for dense models: config.json and safetensors files whose headers list every tensor
 * with its real name, shape and dtype but carry no data. Qwen3-MoE: {@code model.layers.N.mlp.gate.weight} (the
 * router, [experts, hidden]) and {@code model.layers.N.mlp.experts.E.{gate,up,down}_proj.weight}, q/k norms, dense
 * {@code mlp.{gate,up,down}_proj} in {@code mlp_only_layers}; Mixtral: {@code block_sparse_moe.gate.weight} and {@code
 * block_sparse_moe.experts.E.{w1,w2,w3}.weight}. With {@link Weights#FP8_BLOCK} the attention and expert projections
 * are F8_E4M3 with F32 {@code weight_scale_inv}, the router, embeddings, norms and lm_head BF16 (Qwen3-30B-A3B-FP8).
 */
public final class MoeCheckpoints {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private MoeCheckpoints() {}

    /** The two architectures. */
    public enum Family {
        QWEN3_MOE("Qwen3MoeForCausalLM", "qwen3_moe"),
        MIXTRAL("MixtralForCausalLM", "mixtral");

        final String architecture;
        final String modelType;

        Family(String architecture, String modelType) {
            this.architecture = architecture;
            this.modelType = modelType;
        }
    }

    /**
     * Geometry of a MoE model, as in its config.json.
     *
     * @param intermediate intermediate_size: the dense layers' MLP for Qwen3-MoE, one expert's for Mixtral
     * @param expertIntermediate moe_intermediate_size (Qwen3-MoE; Mixtral: equal to intermediate)
     * @param mlpOnlyLayers Qwen3-MoE layers with a dense MLP
     */
    public record Moe(
            Family family,
            int layers,
            int hidden,
            int heads,
            int kvHeads,
            int headDim,
            int vocab,
            int intermediate,
            int experts,
            int topK,
            int expertIntermediate,
            List<Integer> mlpOnlyLayers,
            int maxPositions) {}

    /** Qwen3-30B-A3B: 48 layers, 128 experts, top-8, expert size 768 (30,532,122,624 parameters). */
    public static final Moe QWEN3_30B_A3B =
            new Moe(Family.QWEN3_MOE, 48, 2048, 32, 4, 128, 151936, 6144, 128, 8, 768, List.of(), 40960);

    /** Mixtral-8x7B: 32 layers, 8 experts, top-2, expert size 14336 (46,702,792,704 parameters). */
    public static final Moe MIXTRAL_8X7B =
            new Moe(Family.MIXTRAL, 32, 4096, 32, 8, 128, 32000, 14336, 8, 2, 14336, List.of(), 32768);

    /** config.json of {@code g}. */
    public static Map<String, Object> config(Moe g, Weights weights) {
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("architectures", List.of(g.family().architecture));
        c.put("model_type", g.family().modelType);
        c.put("hidden_size", g.hidden());
        c.put("intermediate_size", g.intermediate());
        c.put("num_hidden_layers", g.layers());
        c.put("num_attention_heads", g.heads());
        c.put("num_key_value_heads", g.kvHeads());
        c.put("vocab_size", g.vocab());
        c.put("max_position_embeddings", g.maxPositions());
        c.put("rms_norm_eps", 1e-6);
        c.put("rope_theta", 1000000.0);
        c.put("tie_word_embeddings", false);
        c.put("torch_dtype", "bfloat16");
        c.put("num_experts_per_tok", g.topK());
        if (g.family() == Family.QWEN3_MOE) {
            c.put("head_dim", g.headDim());
            c.put("num_experts", g.experts());
            c.put("moe_intermediate_size", g.expertIntermediate());
            c.put("decoder_sparse_step", 1);
            c.put("mlp_only_layers", g.mlpOnlyLayers());
            c.put("norm_topk_prob", true);
        } else {
            c.put("num_local_experts", g.experts());
        }
        if (weights != Weights.BF16) {
            c.put("quantization_config", Checkpoints.quantizationConfig(weights));
        }
        return c;
    }

    /** config.json plus safetensors files of {@code layersPerFile} layers each, header only. */
    public static Map<String, byte[]> checkpoint(Moe g, Weights weights, int layersPerFile) {
        Map<String, byte[]> files = new LinkedHashMap<>();
        try {
            files.put("config.json", MAPPER.writeValueAsBytes(config(g, weights)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        int n = (g.layers() + layersPerFile - 1) / layersPerFile;
        for (int f = 0; f < n; f++) {
            Map<String, List<Object>> t = new LinkedHashMap<>();
            if (f == 0) {
                t.put("model.embed_tokens.weight", List.of("BF16", g.vocab(), g.hidden()));
            }
            for (int l = f * layersPerFile; l < Math.min(g.layers(), (f + 1) * layersPerFile); l++) {
                layer(t, g, l, weights);
            }
            if (f == n - 1) {
                t.put("model.norm.weight", List.of("BF16", g.hidden()));
                t.put("lm_head.weight", List.of("BF16", g.vocab(), g.hidden()));
            }
            files.put(
                    "model-" + String.format("%05d", f + 1) + "-of-" + String.format("%05d", n) + ".safetensors",
                    Checkpoints.header(t));
        }
        return files;
    }

    private static void layer(Map<String, List<Object>> t, Moe g, int l, Weights w) {
        String p = "model.layers." + l + ".";
        int q = g.heads() * g.headDim();
        int kv = g.kvHeads() * g.headDim();
        Checkpoints.linear(t, p + "self_attn.q_proj", q, g.hidden(), w);
        Checkpoints.linear(t, p + "self_attn.k_proj", kv, g.hidden(), w);
        Checkpoints.linear(t, p + "self_attn.v_proj", kv, g.hidden(), w);
        Checkpoints.linear(t, p + "self_attn.o_proj", g.hidden(), q, w);
        t.put(p + "input_layernorm.weight", List.of("BF16", g.hidden()));
        t.put(p + "post_attention_layernorm.weight", List.of("BF16", g.hidden()));
        if (g.family() == Family.MIXTRAL) {
            t.put(p + "block_sparse_moe.gate.weight", List.of("BF16", g.experts(), g.hidden()));
            for (int e = 0; e < g.experts(); e++) {
                String x = p + "block_sparse_moe.experts." + e + ".";
                Checkpoints.linear(t, x + "w1", g.expertIntermediate(), g.hidden(), w);
                Checkpoints.linear(t, x + "w2", g.hidden(), g.expertIntermediate(), w);
                Checkpoints.linear(t, x + "w3", g.expertIntermediate(), g.hidden(), w);
            }
            return;
        }
        t.put(p + "self_attn.q_norm.weight", List.of("BF16", g.headDim()));
        t.put(p + "self_attn.k_norm.weight", List.of("BF16", g.headDim()));
        if (g.mlpOnlyLayers().contains(l)) {
            Checkpoints.linear(t, p + "mlp.gate_proj", g.intermediate(), g.hidden(), w);
            Checkpoints.linear(t, p + "mlp.up_proj", g.intermediate(), g.hidden(), w);
            Checkpoints.linear(t, p + "mlp.down_proj", g.hidden(), g.intermediate(), w);
            return;
        }
        t.put(p + "mlp.gate.weight", List.of("BF16", g.experts(), g.hidden()));
        for (int e = 0; e < g.experts(); e++) {
            String x = p + "mlp.experts." + e + ".";
            Checkpoints.linear(t, x + "gate_proj", g.expertIntermediate(), g.hidden(), w);
            Checkpoints.linear(t, x + "up_proj", g.expertIntermediate(), g.hidden(), w);
            Checkpoints.linear(t, x + "down_proj", g.hidden(), g.expertIntermediate(), w);
        }
    }
}
