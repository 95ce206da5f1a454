package io.tensorlane.modelfacts;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Mixture-of-Experts part of a config.json, for the two MoE architectures the operator plans ({@link
 * ConfigFacts#MOE}): {@code Qwen3MoeForCausalLM} ({@code num_experts}, {@code num_experts_per_tok}, {@code
 * moe_intermediate_size}; {@code decoder_sparse_step} and {@code mlp_only_layers} say which layers keep a dense MLP of
 * {@code intermediate_size}) and {@code MixtralForCausalLM} ({@code num_local_experts}, {@code num_experts_per_tok};
 * {@code intermediate_size} is one expert's, every layer is MoE). Missing fields take transformers' defaults
 * (Qwen3MoeConfig, MixtralConfig), as the engines loading the same config do.
 *
 * <p>Variants the operator does not plan are named before anything else is read ({@link #unsupportedVariants}): shared
 * experts (Qwen2-MoE's {@code shared_expert_intermediate_size}, DeepSeek's {@code n_shared_experts}), grouped top-k
 * routing ({@code n_group} / {@code topk_group}) and multi-head latent attention ({@code kv_lora_rank} / {@code
 * q_lora_rank}). Pure.
 *
 * @param experts routed experts per MoE layer
 * @param expertsPerToken top-k
 * @param expertIntermediateSize intermediate size of one expert
 * @param moeLayers indices of the layers whose MLP is a MoE block, ascending
 */
public record MoeConfig(int experts, int expertsPerToken, int expertIntermediateSize, List<Integer> moeLayers) {
    /** transformers' Qwen3MoeConfig defaults. */
    static final int QWEN3_EXPERTS = 128;

    static final int QWEN3_TOP_K = 8;
    static final int QWEN3_EXPERT_INTERMEDIATE = 768;
    /** transformers' MixtralConfig defaults. */
    static final int MIXTRAL_EXPERTS = 8;

    static final int MIXTRAL_TOP_K = 2;

    public MoeConfig {
        moeLayers = List.copyOf(moeLayers);
    }

    /**
     * The MoE facts of a config of architecture {@code arch}, or null for a dense architecture.
     *
     * @param layers num_hidden_layers
     * @throws ModelFactsException a field of the wrong type, top-k not in 1..experts, a layer index out of range, or no
     *     MoE layer at all
     */
    public static MoeConfig read(ConfigJson c, String arch, int layers) {
        return switch (arch) {
            case "Qwen3MoeForCausalLM" -> qwen3(c, layers);
            case "MixtralForCausalLM" -> mixtral(c, layers);
            default -> null;
        };
    }

    private static MoeConfig qwen3(ConfigJson c, int layers) {
        // the Hub's Qwen3-MoE configs say num_experts; transformers 5 writes the standardised num_local_experts
        Integer named = c.optPositive("num_experts");
        int experts = orDefault(named != null ? named : c.optPositive("num_local_experts"), QWEN3_EXPERTS);
        int topK = topK(c, orDefault(c.optPositive("num_experts_per_tok"), QWEN3_TOP_K), experts, "num_experts");
        int inter = orDefault(c.optPositive("moe_intermediate_size"), QWEN3_EXPERT_INTERMEDIATE);
        int step = orDefault(c.optPositive("decoder_sparse_step"), 1);
        Set<Integer> mlpOnly = new TreeSet<>();
        JsonNode only = c.field("mlp_only_layers");
        if (only != null) {
            if (!only.isArray()) {
                throw c.error("mlp_only_layers must be a list of layer indices, got " + only);
            }
            for (JsonNode n : only) {
                int i = c.asInt("mlp_only_layers", n);
                if (i < 0 || i >= layers) {
                    throw c.error("mlp_only_layers names layer " + i + ", but num_hidden_layers is " + layers);
                }
                mlpOnly.add(i);
            }
        }
        List<Integer> moe = moeLayers(layers, step, mlpOnly);
        if (moe.isEmpty()) {
            throw c.error("no layer is a Mixture-of-Experts layer (decoder_sparse_step " + step + ", mlp_only_layers "
                    + mlpOnly + " of " + layers + " layers); a dense Qwen3 model is Qwen3ForCausalLM");
        }
        return new MoeConfig(experts, topK, inter, moe);
    }

    private static MoeConfig mixtral(ConfigJson c, int layers) {
        int experts = orDefault(c.optPositive("num_local_experts"), MIXTRAL_EXPERTS);
        int topK =
                topK(c, orDefault(c.optPositive("num_experts_per_tok"), MIXTRAL_TOP_K), experts, "num_local_experts");
        return new MoeConfig(experts, topK, c.requirePositive("intermediate_size"), moeLayers(layers, 1, Set.of()));
    }

    /**
     * The layers whose MLP is a MoE block, as transformers' Qwen3-MoE (and Qwen2-MoE) decoder layer decides it: layer
     * {@code i} is MoE when it is not in {@code mlpOnly} and {@code (i + 1) % sparseStep == 0}.
     */
    public static List<Integer> moeLayers(int layers, int sparseStep, Set<Integer> mlpOnly) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < layers; i++) {
            if (!mlpOnly.contains(i) && (i + 1) % sparseStep == 0) {
                out.add(i);
            }
        }
        return out;
    }

    private static int topK(ConfigJson c, int topK, int experts, String expertsField) {
        if (topK > experts) {
            throw c.error("num_experts_per_tok " + topK + " is more than " + expertsField + " " + experts
                    + " (each token is routed to that many of the experts)");
        }
        return topK;
    }

    private static int orDefault(Integer v, int dflt) {
        return v == null ? dflt : v;
    }

    /**
     * Every MoE variant of this config the operator does not plan, in words naming the config.json field and its
     * value; empty when there is none. Looked at for every architecture, so DeepSeek-V2/V3 and Qwen2-MoE configs say
     * what in them is not supported, not only that their class is not.
     */
    public static List<String> unsupportedVariants(ConfigJson c) {
        List<String> out = new ArrayList<>();
        shared(c, out, "shared_expert_intermediate_size", "a shared expert (Qwen2-MoE style)");
        shared(c, out, "n_shared_experts", "shared experts (DeepSeek style)");
        shared(c, out, "num_shared_experts", "shared experts");
        Integer group = positiveOrNull(c, "n_group");
        Integer topkGroup = positiveOrNull(c, "topk_group");
        if (group != null && group > 1) {
            out.add("grouped top-k routing (n_group " + group + ", topk_group " + topkGroup + ")");
        }
        Integer kvLora = positiveOrNull(c, "kv_lora_rank");
        Integer qLora = positiveOrNull(c, "q_lora_rank");
        if (kvLora != null || qLora != null) {
            out.add("multi-head latent attention (" + (kvLora != null ? "kv_lora_rank " + kvLora : "")
                    + (kvLora != null && qLora != null ? ", " : "") + (qLora != null ? "q_lora_rank " + qLora : "")
                    + ")");
        }
        return out;
    }

    private static void shared(ConfigJson c, List<String> out, String field, String what) {
        Integer v = positiveOrNull(c, field);
        if (v != null) {
            out.add(what + " (" + field + " " + v + ")");
        }
    }

    /** An integer field that is present and > 0; null when absent, null, 0 or not a number (nothing to report). */
    private static Integer positiveOrNull(ConfigJson c, String field) {
        JsonNode n = c.field(field);
        return n != null && n.isNumber() && n.intValue() > 0 ? n.intValue() : null;
    }
}
