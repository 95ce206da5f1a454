package io.tensorlane.modelfacts;

import io.tensorlane.api.v1alpha1.ModelGeometry;

/**
 * Total and active parameters and weight bytes of a model: the one place this arithmetic lives. A token uses every
 * weight of a dense model; in a Mixture of Experts it uses, per MoE layer, only the {@code expertsPerToken} experts it
 * is routed to, and everything else fully (router, attention, embeddings, lm_head, norms, dense layers). Since the
 * experts of a layer are all the same size, the active part of the routed experts is {@code expertsPerToken /
 * experts} of them:
 *
 * <pre>active = total − routed × (experts − expertsPerToken) / experts</pre>
 *
 * for parameters and for bytes alike. {@code routed} comes from the safetensors headers (the tensors {@link
 * TensorTally#routedExpert} names, FP8 scales in the bytes), checked against what config.json describes ({@link
 * #routedParameters}); when no header tensor has a routed expert's name (a layout not read here), from config.json,
 * its bytes at the checkpoint's average bytes per parameter. Pure.
 */
public final class ActiveWeights {
    /** gate, up and down projections of one expert. */
    static final int EXPERT_MATRICES = 3;

    private ActiveWeights() {}

    /**
     * @param routedFromHeaders whether the routed experts' share was counted in the headers (else: from config.json)
     */
    public record Counts(
            long parameters,
            long activeParameters,
            long weightBytes,
            long activeWeightBytes,
            boolean routedFromHeaders) {}

    /**
     * Parameters of the routed experts config.json describes: MoE layers × experts × 3 (gate, up, down) × hidden ×
     * expert intermediate size (the experts have no biases); 0 for a dense geometry.
     */
    public static long routedParameters(ModelGeometry g) {
        if (g == null || !g.moe() || g.expertIntermediateSize == null) {
            return 0;
        }
        return Math.multiplyExact(
                (long) g.effectiveMoeLayers() * g.experts * EXPERT_MATRICES,
                (long) g.hiddenSize * g.expertIntermediateSize);
    }

    /**
     * What one token uses of {@code total} (parameters or bytes), {@code routed} of which are routed experts: {@code
     * total − routed × (experts − topK) / experts}; {@code total} when {@code experts} is 0 (dense).
     */
    public static long active(long total, long routed, int experts, int topK) {
        if (experts == 0 || routed == 0) {
            return total;
        }
        if (topK < 1 || topK > experts || routed > total) {
            throw new IllegalArgumentException(
                    "top-k " + topK + " of " + experts + " experts, routed " + routed + " of " + total);
        }
        return total - Math.multiplyExact(routed, (long) (experts - topK)) / experts;
    }

    /**
     * The counts of a checkpoint whose headers add up to {@code t} and whose config.json says {@code g} (null: no
     * geometry known, counted as dense).
     *
     * @param source the checkpoint as the user knows it; starts every error message
     * @throws ModelFactsException the headers' routed experts disagree with config.json
     */
    public static Counts of(ModelGeometry g, TensorTally t, String source) {
        long expected = routedParameters(g);
        if (g == null || !g.moe()) {
            if (t.routedParameters() > 0) {
                throw new ModelFactsException(source + ": the safetensors headers hold routed-expert tensors ("
                        + t.routedParameters() + " parameters under layers.N.mlp.experts / block_sparse_moe.experts) "
                        + "but config.json describes a dense model");
            }
            return new Counts(t.parameters(), t.parameters(), t.bytes(), t.bytes(), true);
        }
        int experts = g.experts;
        int topK = g.expertsPerToken;
        boolean fromHeaders = t.routedParameters() > 0;
        if (fromHeaders && t.routedParameters() != expected) {
            throw new ModelFactsException(source + ": the safetensors headers hold " + t.routedParameters()
                    + " routed-expert parameters but config.json describes " + expected + " ("
                    + g.effectiveMoeLayers() + " MoE layers × " + experts + " experts × 3 × hidden_size "
                    + g.hiddenSize + " × expert intermediate size " + g.expertIntermediateSize + ")");
        }
        if (!fromHeaders && expected > t.parameters()) {
            throw new ModelFactsException(source + ": config.json describes " + expected
                    + " routed-expert parameters but the safetensors headers hold only " + t.parameters()
                    + " parameters in all");
        }
        long routedBytes = fromHeaders
                ? t.routedBytes()
                : t.parameters() == 0 ? 0 : Math.round((double) expected * t.bytes() / t.parameters());
        return new Counts(
                t.parameters(),
                active(t.parameters(), expected, experts, topK),
                t.bytes(),
                active(t.bytes(), routedBytes, experts, topK),
                fromHeaders);
    }
}
