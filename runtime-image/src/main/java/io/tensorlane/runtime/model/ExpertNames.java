package io.tensorlane.runtime.model;

/**
 * Where a Mixture-of-Experts architecture keeps its experts in a checkpoint (the Hub's per-expert layout, as
 * transformers 5 saves it): {@code model.layers.{i}.{block}.gate.weight} is the router [experts, hidden] and {@code
 * model.layers.{i}.{block}.experts.{e}.{gate|up|down}.weight} expert e's SwiGLU projections.
 *
 * @param normTopKField the config field that turns the top-k renormalisation on (default off); null: always on
 */
public record ExpertNames(String block, String gate, String up, String down, String normTopKField) {
    /** Qwen3-MoE: {@code mlp.experts.{e}.gate_proj / up_proj / down_proj}, router {@code mlp.gate}. */
    public static final ExpertNames QWEN3_MOE =
            new ExpertNames("mlp", "gate_proj", "up_proj", "down_proj", "norm_topk_prob");
    /** Mixtral: {@code block_sparse_moe.experts.{e}.w1 (gate) / w3 (up) / w2 (down)}, router {@code block_sparse_moe.gate}. */
    public static final ExpertNames MIXTRAL = new ExpertNames("block_sparse_moe", "w1", "w3", "w2", null);

    /** The router weight of layer {@code layer}. */
    public String router(int layer) {
        return ShardPlan.layer(layer, block + ".gate.weight");
    }

    /** Expert {@code e}'s projection {@code which} ({@link #gate}, {@link #up} or {@link #down}) of layer {@code layer}. */
    public String expert(int layer, int e, String which) {
        return ShardPlan.layer(layer, block + ".experts." + e + "." + which + ".weight");
    }
}
