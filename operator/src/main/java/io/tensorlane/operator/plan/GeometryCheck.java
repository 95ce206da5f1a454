package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.ModelGeometry;
import java.util.ArrayList;
import java.util.List;

/**
 * Can an engine split and run this model geometry at tensor parallelism {@code tp}? The rules are those of the tensor
 * parallel layers of vLLM and SGLang (Megatron-style): query heads are split across the GPUs, so TP must divide them;
 * key/value heads are split when TP divides them and replicated when TP is a multiple of them (any other ratio leaves
 * a GPU with a fraction of a head); the MLP's intermediate dimension is split, so TP must divide it; every group of
 * query heads shares one key/value head, so key/value heads must divide the query heads; without an explicit head
 * dimension it is hiddenSize / attentionHeads, which must be whole; rotary embeddings rotate pairs, so the head
 * dimension is even. The vocabulary is padded by the engines and has no rule.
 *
 * <p>A Mixture of Experts is split the same way inside every expert (vLLM's and SGLang's fused MoE with tensor
 * parallelism: gate and up by columns, down by rows, the router replicated), so TP must divide the expert intermediate
 * size; the dense intermediate size is checked only when some layers keep a dense MLP.
 *
 * <p>Pure and separate from the spec, so geometry read from a model's config.json can be checked the same way.
 */
public final class GeometryCheck {
    private GeometryCheck() {}

    /**
     * Every problem found, each naming the field as {@code where.field}; empty when the geometry can run at {@code tp}.
     * Missing or non-positive required fields are reported and stop the check (the ratios need them).
     *
     * @param where the path of the geometry in messages, e.g. {@code spec.model.geometry}
     * @param tp tensor parallelism (GPUs per replica), at least 1
     */
    public static List<String> problems(ModelGeometry g, int tp, String where) {
        List<String> out = new ArrayList<>();
        if (g == null) {
            out.add(where + " is required (layers, hiddenSize, attentionHeads, kvHeads)");
            return out;
        }
        required(out, where, "layers", g.layers);
        required(out, where, "hiddenSize", g.hiddenSize);
        required(out, where, "attentionHeads", g.attentionHeads);
        required(out, where, "kvHeads", g.kvHeads);
        optional(out, where, "headDim", g.headDim);
        optional(out, where, "vocabSize", g.vocabSize);
        optional(out, where, "intermediateSize", g.intermediateSize);
        moeFields(out, g, where);
        if (!out.isEmpty()) {
            return out;
        }
        int heads = g.attentionHeads;
        int kv = g.kvHeads;
        if (kv > heads) {
            out.add(where + ".kvHeads " + kv + " is more than " + where + ".attentionHeads " + heads
                    + " (each key/value head serves a group of query heads)");
        } else if (heads % kv != 0) {
            out.add(where + ".kvHeads " + kv + " must divide " + where + ".attentionHeads " + heads
                    + " (query heads are grouped evenly over the key/value heads)");
        }
        if (g.headDim == null && g.hiddenSize % heads != 0) {
            out.add(where + ".hiddenSize " + g.hiddenSize + " is not a multiple of " + where + ".attentionHeads "
                    + heads + ", so the head dimension is not whole; set " + where
                    + ".headDim (head_dim in config.json)");
        } else if (g.effectiveHeadDim() % 2 != 0) {
            out.add(where + ".headDim " + g.effectiveHeadDim() + " must be even (rotary embeddings rotate pairs)");
        }
        if (heads % tp != 0) {
            out.add("spec.parallelism.tensor " + tp + " must divide " + where + ".attentionHeads " + heads
                    + " (query heads are split across the GPUs); use one of " + divisors(heads));
        }
        if (kv % tp != 0 && tp % kv != 0) {
            out.add("spec.parallelism.tensor " + tp + " and " + where + ".kvHeads " + kv
                    + " must divide one another (key/value "
                    + "heads are split when TP divides them and replicated when TP is a multiple of them); use one of "
                    + kvCompatible(heads, kv));
        }
        int inter = g.effectiveIntermediateSize();
        if (g.denseLayers() > 0 && inter % tp != 0) {
            out.add("spec.parallelism.tensor " + tp + " must divide " + where + ".intermediateSize " + inter
                    + (g.intermediateSize == null ? " (4 × hiddenSize)" : "") + " (the MLP is split across the GPUs"
                    + (g.moe() ? "; " + g.denseLayers() + " of the " + g.layers + " layers are dense" : "") + ")");
        }
        if (g.moe() && g.expertIntermediateSize % tp != 0) {
            out.add("spec.parallelism.tensor " + tp + " must divide " + where + ".expertIntermediateSize "
                    + g.expertIntermediateSize + " (each of the " + g.experts
                    + " experts is split across the GPUs: gate and up by columns, down by rows); use one of "
                    + divisors(g.expertIntermediateSize));
        }
        return out;
    }

    /** The Mixture-of-Experts fields: positive, experts with its top-k and expert size (or none of them), in range. */
    private static void moeFields(List<String> out, ModelGeometry g, String where) {
        optional(out, where, "experts", g.experts);
        optional(out, where, "expertsPerToken", g.expertsPerToken);
        optional(out, where, "expertIntermediateSize", g.expertIntermediateSize);
        optional(out, where, "moeLayers", g.moeLayers);
        if (!out.isEmpty()) {
            return;
        }
        if (g.experts == null) {
            onlyWithExperts(out, where, "expertsPerToken", g.expertsPerToken);
            onlyWithExperts(out, where, "expertIntermediateSize", g.expertIntermediateSize);
            onlyWithExperts(out, where, "moeLayers", g.moeLayers);
            return;
        }
        if (g.expertsPerToken == null) {
            out.add(where + ".expertsPerToken is required with " + where + ".experts (num_experts_per_tok)");
        } else if (g.expertsPerToken > g.experts) {
            out.add(where + ".expertsPerToken " + g.expertsPerToken + " is more than " + where + ".experts " + g.experts
                    + " (each token is routed to that many of the experts)");
        }
        if (g.expertIntermediateSize == null) {
            out.add(where + ".expertIntermediateSize is required with " + where
                    + ".experts (moe_intermediate_size; Mixtral: intermediate_size)");
        }
        if (g.moeLayers != null && g.layers != null && g.moeLayers > g.layers) {
            out.add(where + ".moeLayers " + g.moeLayers + " is more than " + where + ".layers " + g.layers);
        }
    }

    private static void onlyWithExperts(List<String> out, String where, String field, Integer v) {
        if (v != null) {
            out.add(where + "." + field + " is set but " + where + ".experts is not (a Mixture of Experts needs "
                    + "experts, expertsPerToken and expertIntermediateSize)");
        }
    }

    private static void required(List<String> out, String where, String field, Integer v) {
        if (v == null) {
            out.add(where + "." + field + " is required");
        } else if (v < 1) {
            out.add(where + "." + field + " must be > 0, got " + v);
        }
    }

    private static void optional(List<String> out, String where, String field, Integer v) {
        if (v != null && v < 1) {
            out.add(where + "." + field + " must be > 0 when set, got " + v);
        }
    }

    /** TP values 1..8 that divide {@code n}. */
    private static List<Integer> divisors(int n) {
        List<Integer> d = new ArrayList<>();
        for (int t = 1; t <= 8; t++) {
            if (n % t == 0) {
                d.add(t);
            }
        }
        return d;
    }

    /** TP values 1..8 that divide the query heads and divide or are a multiple of the key/value heads. */
    private static List<Integer> kvCompatible(int heads, int kv) {
        return divisors(heads).stream().filter(t -> kv % t == 0 || t % kv == 0).toList();
    }
}
