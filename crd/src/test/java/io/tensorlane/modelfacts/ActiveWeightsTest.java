package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.api.v1alpha1.ModelGeometry;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Total vs active parameters and bytes: the arithmetic, and the headers it is counted from. */
class ActiveWeightsTest {
    static Stream<Arguments> activeTable() {
        return Stream.of(
                // total, routed, experts, top-k → active
                Arguments.of(1000L, 0L, 0, 0, 1000L),
                Arguments.of(1000L, 800L, 8, 2, 400L),
                Arguments.of(1000L, 800L, 8, 8, 1000L),
                Arguments.of(1000L, 1000L, 4, 1, 250L),
                // Qwen3-30B-A3B: 48 layers × 128 experts × 3 × 2048 × 768 routed, top-8
                Arguments.of(30_532_122_624L, 28_991_029_248L, 128, 8, 3_353_032_704L),
                // Mixtral-8x7B: 32 layers × 8 experts × 3 × 4096 × 14336 routed, top-2
                Arguments.of(46_702_792_704L, 45_097_156_608L, 8, 2, 12_879_925_248L));
    }

    @ParameterizedTest(name = "{0} total, {1} routed, top-{3} of {2}: {4}")
    @MethodSource("activeTable")
    void activeIsTotalLessTheExpertsATokenSkips(long total, long routed, int experts, int topK, long active) {
        assertThat(ActiveWeights.active(total, routed, experts, topK)).isEqualTo(active);
    }

    static ModelGeometry geometry(int layers, int hidden, Integer experts, Integer topK, Integer inter, Integer moe) {
        ModelGeometry g = new ModelGeometry();
        g.layers = layers;
        g.hiddenSize = hidden;
        g.attentionHeads = 4;
        g.kvHeads = 2;
        g.experts = experts;
        g.expertsPerToken = topK;
        g.expertIntermediateSize = inter;
        g.moeLayers = moe;
        return g;
    }

    static Stream<Arguments> routedTable() {
        return Stream.of(
                Arguments.of(geometry(32, 4096, null, null, null, null), 0L),
                Arguments.of(geometry(48, 2048, 128, 8, 768, null), 28_991_029_248L),
                Arguments.of(geometry(32, 4096, 8, 2, 14336, 32), 45_097_156_608L),
                // two of four layers dense (mlp_only_layers)
                Arguments.of(geometry(4, 64, 16, 2, 32, 2), 2L * 16 * 3 * 64 * 32));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("routedTable")
    void routedParametersFromConfig(ModelGeometry g, long routed) {
        assertThat(ActiveWeights.routedParameters(g)).isEqualTo(routed);
    }

    static SafetensorsHeader.Entry entry(String name, String dtype, long... shape) {
        long n = SafetensorsHeader.elementBytes(dtype);
        for (long d : shape) {
            n *= d;
        }
        return new SafetensorsHeader.Entry(name, dtype, shape, 0, n);
    }

    /** A 2-layer Qwen3-MoE-style checkpoint: 4 experts of [8, 16] (gate, up) and [16, 8] (down), router [4, 16]. */
    static List<SafetensorsHeader.Entry> tinyMoe(boolean fp8) {
        List<SafetensorsHeader.Entry> t = new ArrayList<>();
        t.add(entry("model.embed_tokens.weight", "BF16", 100, 16));
        for (int l = 0; l < 2; l++) {
            String p = "model.layers." + l + ".";
            t.add(entry(p + "self_attn.q_proj.weight", "BF16", 16, 16));
            t.add(entry(p + "mlp.gate.weight", "BF16", 4, 16));
            for (int e = 0; e < 4; e++) {
                for (String m : List.of("gate_proj", "up_proj", "down_proj")) {
                    long[] shape = m.equals("down_proj") ? new long[] {16, 8} : new long[] {8, 16};
                    t.add(entry(p + "mlp.experts." + e + "." + m + ".weight", fp8 ? "F8_E4M3" : "BF16", shape));
                    if (fp8) {
                        t.add(entry(p + "mlp.experts." + e + "." + m + ".weight_scale_inv", "F32", 1, 1));
                    }
                }
            }
        }
        t.add(entry("lm_head.weight", "BF16", 100, 16));
        return t;
    }

    /** Its config: 2 MoE layers of 4 experts, top-1, expert size 8, hidden 16. */
    static final ModelGeometry TINY = geometry(2, 16, 4, 1, 8, 2);

    static Stream<Arguments> headerTable() {
        long dense = 2L * 100 * 16 + 2 * (16 * 16 + 4 * 16); // embeddings, lm_head; q_proj and router per layer
        long routed = 2L * 4 * 3 * 8 * 16;
        return Stream.of(
                // bf16: 2 bytes per parameter; a token uses 1 of the 4 experts
                Arguments.of(false, dense + routed, dense + routed / 4, 2 * (dense + routed), 2 * (dense + routed / 4)),
                // fp8 experts: 1 byte each plus one 4-byte scale per matrix, the scales counted in bytes only
                Arguments.of(
                        true,
                        dense + routed,
                        dense + routed / 4,
                        2 * dense + routed + 2L * 4 * 3 * 4,
                        2 * dense + (routed + 2L * 4 * 3 * 4) / 4));
    }

    @ParameterizedTest(name = "fp8 experts {0}")
    @MethodSource("headerTable")
    void countsFromTheHeaders(boolean fp8, long params, long activeParams, long bytes, long activeBytes) {
        TensorTally t = TensorTally.of(tinyMoe(fp8));
        ActiveWeights.Counts c = ActiveWeights.of(TINY, t, "m");
        assertThat(c).isEqualTo(new ActiveWeights.Counts(params, activeParams, bytes, activeBytes, true));
        assertThat(t.routedParameters()).isEqualTo(ActiveWeights.routedParameters(TINY));
    }

    @Test
    void filesAddUpToTheWholeCheckpoint() {
        List<SafetensorsHeader.Entry> all = tinyMoe(true);
        TensorTally whole = TensorTally.of(all);
        TensorTally split = TensorTally.of(all.subList(0, 10)).plus(TensorTally.of(all.subList(10, all.size())));
        assertThat(split).isEqualTo(whole);
    }

    @Test
    void withoutRoutedExpertNamesTheSplitComesFromConfigJson() {
        // the same tensors under names not read here: the routed share is config.json's, at the average bytes
        List<SafetensorsHeader.Entry> renamed = tinyMoe(false).stream()
                .map(e -> new SafetensorsHeader.Entry(
                        e.name().replace("mlp.experts.", "mlp.moe_experts."), e.dtype(), e.shape(), e.begin(), e.end()))
                .toList();
        ActiveWeights.Counts fromHeaders = ActiveWeights.of(TINY, TensorTally.of(tinyMoe(false)), "m");
        ActiveWeights.Counts fromConfig = ActiveWeights.of(TINY, TensorTally.of(renamed), "m");
        assertThat(fromConfig.routedFromHeaders()).isFalse();
        assertThat(fromConfig.activeParameters()).isEqualTo(fromHeaders.activeParameters());
        assertThat(fromConfig.activeWeightBytes())
                .as("2 bytes per parameter throughout")
                .isEqualTo(fromHeaders.activeWeightBytes());
    }

    @Test
    void routerAndSharedExpertsAreNotRoutedExperts() {
        assertThat(TensorTally.routedExpert("model.layers.3.mlp.experts.17.down_proj.weight"))
                .isTrue();
        assertThat(TensorTally.routedExpert("model.layers.3.block_sparse_moe.experts.7.w2.weight"))
                .isTrue();
        assertThat(TensorTally.routedExpert("model.layers.3.mlp.experts.gate_up_proj"))
                .as("fused")
                .isTrue();
        assertThat(TensorTally.routedExpert("model.language_model.layers.0.mlp.experts.0.up_proj.weight"))
                .isTrue();
        assertThat(TensorTally.routedExpert("model.layers.3.mlp.gate.weight")).isFalse();
        assertThat(TensorTally.routedExpert("model.layers.3.block_sparse_moe.gate.weight"))
                .isFalse();
        assertThat(TensorTally.routedExpert("model.layers.3.mlp.shared_expert.up_proj.weight"))
                .isFalse();
        assertThat(TensorTally.routedExpert("model.layers.3.mlp.shared_experts.up_proj.weight"))
                .isFalse();
        assertThat(TensorTally.routedExpert("model.layers.3.mlp.up_proj.weight"))
                .isFalse();
        assertThat(TensorTally.scale("model.layers.0.mlp.experts.0.up_proj.weight_scale_inv"))
                .isTrue();
        assertThat(TensorTally.scale("model.layers.0.self_attn.q_proj.weight_scale"))
                .isTrue();
        assertThat(TensorTally.scale("model.layers.0.self_attn.q_proj.input_scale"))
                .isTrue();
        assertThat(TensorTally.scale("model.layers.0.self_attn.q_proj.weight")).isFalse();
    }

    @Test
    void headersThatDisagreeWithConfigJsonAreAnError() {
        TensorTally t = TensorTally.of(tinyMoe(false));
        ModelGeometry eight = geometry(2, 16, 8, 1, 8, 2);
        assertThatThrownBy(() -> ActiveWeights.of(eight, t, "hf://o/m@a"))
                .isInstanceOf(ModelFactsException.class)
                .hasMessage(
                        "hf://o/m@a: the safetensors headers hold 3072 routed-expert parameters but config.json "
                                + "describes 6144 (2 MoE layers × 8 experts × 3 × hidden_size 16 × expert intermediate size 8)");
        ModelGeometry dense = geometry(2, 16, null, null, null, null);
        assertThatThrownBy(() -> ActiveWeights.of(dense, t, "hf://o/m@a"))
                .hasMessageContaining("hold routed-expert tensors (3072 parameters")
                .hasMessageContaining("but config.json describes a dense model");
    }
}
