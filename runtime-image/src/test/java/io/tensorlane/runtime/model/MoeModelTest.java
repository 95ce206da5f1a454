package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Qwen3-MoE and Mixtral configs, their tensor parallel layout and shard plans. */
class MoeModelTest {
    static final String QWEN3_MOE = """
            {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 512,
             "intermediate_size": 1024, "moe_intermediate_size": 256, "num_experts": 16, "num_experts_per_tok": 2,
             "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [0], "num_hidden_layers": 4,
             "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 64, "vocab_size": 4096,
             "max_position_embeddings": 2048, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
             "tie_word_embeddings": false, "dtype": "bfloat16", "use_sliding_window": false}
            """;
    static final String MIXTRAL = """
            {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 512,
             "intermediate_size": 702, "num_local_experts": 8, "num_experts_per_tok": 2, "num_hidden_layers": 3,
             "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64, "vocab_size": 4096,
             "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 1000000.0,
             "sliding_window": null, "tie_word_embeddings": false, "dtype": "bfloat16"}
            """;

    static ModelConfig parse(String json) {
        return ModelConfig.parse(json, "config.json");
    }

    @Test
    void qwen3MoeConfig() {
        ModelConfig c = parse(QWEN3_MOE);
        assertThat(c.architecture()).isEqualTo(Architecture.QWEN3_MOE);
        assertThat(c.qkNorm()).isTrue();
        assertThat(c.qkvBias()).isFalse();
        MoeSpec m = c.moe();
        assertThat(m.experts()).isEqualTo(16);
        assertThat(m.topK()).isEqualTo(2);
        assertThat(m.expertIntermediateSize()).isEqualTo(256);
        assertThat(m.normTopK()).isTrue();
        assertThat(m.moeLayers()).containsExactly(1, 2, 3);
        assertThat(c.isMoe(0)).isFalse();
        assertThat(c.isMoe(1)).isTrue();
        assertThat(c.denseLayers()).isEqualTo(1);
    }

    /** Qwen3MoeConfig's default norm_topk_prob is false; decoder_sparse_step 2 makes every second layer MoE. */
    @Test
    void qwen3MoeDefaultsAndSparseStep() {
        ModelConfig c = parse(QWEN3_MOE
                .replace("\"norm_topk_prob\": true, ", "")
                .replace("\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 2")
                .replace("\"mlp_only_layers\": [0]", "\"mlp_only_layers\": []"));
        assertThat(c.moe().normTopK()).isFalse();
        assertThat(c.moe().moeLayers()).containsExactly(1, 3);
        assertThat(c.denseLayers()).isEqualTo(2);
    }

    @Test
    void mixtralConfig() {
        ModelConfig c = parse(MIXTRAL);
        assertThat(c.architecture()).isEqualTo(Architecture.MIXTRAL);
        assertThat(c.qkNorm()).isFalse();
        assertThat(c.slidingWindow()).isNull();
        assertThat(c.moe().experts()).isEqualTo(8);
        assertThat(c.moe().expertIntermediateSize()).isEqualTo(702);
        assertThat(c.moe().normTopK()).isTrue(); // Mixtral always renormalises
        assertThat(c.moe().moeLayers()).containsExactly(0, 1, 2);
        assertThat(c.denseLayers()).isZero();
    }

    @Test
    void unsupportedVariantsAreNamed() {
        assertThatThrownBy(() -> parse(QWEN3_MOE.replace(
                        "\"num_experts\": 16,", "\"num_experts\": 16, " + "\"shared_expert_intermediate_size\": 512,")))
                .hasMessageContaining("shared expert")
                .hasMessageContaining("shared_expert_intermediate_size 512");
        assertThatThrownBy(() -> parse(QWEN3_MOE.replace("\"num_experts\": 16", "\"num_experts\": 1024")))
                .hasMessageContaining("num_experts 1024")
                .hasMessageContaining("512");
    }

    /** Mixtral's experts of 702 split at TP 1 and 2 only; the message says why. */
    @Test
    void expertIntermediateMustDivideByTp() {
        ModelConfig c = parse(MIXTRAL);
        assertThat(TpLayout.of(c, 2).expertIntermediatePerRank()).isEqualTo(351);
        assertThatThrownBy(() -> TpLayout.of(c, 4))
                .hasMessageContaining("experts' intermediate size 702")
                .hasMessageContaining("tensor parallel size 4");
        // Mixtral has no dense layer: its intermediate_size is the experts'; Qwen3-MoE's dense 1024 must divide too
        assertThatThrownBy(() -> TpLayout.of(
                        parse(QWEN3_MOE.replace("\"intermediate_size\": 1024", "\"intermediate_size\": 1026")), 4))
                .hasMessageContaining("intermediate_size 1026");
    }

    /** Every rank holds every expert's share: router replicated, gate/up rows and down columns of each expert. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4, 8})
    void shardPlanStacksExperts(int tp) {
        ModelConfig c = parse(QWEN3_MOE);
        TpLayout l = TpLayout.of(c, tp);
        int inter = 256 / tp;
        for (int r = 0; r < tp; r++) {
            Map<String, DeviceTensor> byKey =
                    ShardPlan.forRank(l, r).stream().collect(Collectors.toMap(DeviceTensor::key, t -> t));
            assertThat(byKey).containsKeys("layers.0.gate_up", "layers.0.down");
            assertThat(byKey).doesNotContainKeys("layers.0.router", "layers.1.gate_up");
            DeviceTensor router = byKey.get("layers.1.router");
            assertThat(router.rows()).isEqualTo(16);
            assertThat(router.pieces()).containsExactly(new Piece("model.layers.1.mlp.gate.weight", 0, 0, 16, 512, 0));
            DeviceTensor gu = byKey.get("layers.2.experts_gate_up");
            assertThat(gu.rows()).isEqualTo(16L * 2 * inter);
            assertThat(gu.cols()).isEqualTo(512);
            assertThat(gu.pieces()).hasSize(32);
            assertThat(gu.pieces().get(2 * 5 + 1))
                    .isEqualTo(new Piece(
                            "model.layers.2.mlp.experts.5.up_proj.weight",
                            (long) r * inter,
                            0,
                            inter,
                            512,
                            5L * 2 * inter + inter));
            DeviceTensor down = byKey.get("layers.3.experts_down");
            assertThat(down.rows()).isEqualTo(16L * 512);
            assertThat(down.cols()).isEqualTo(inter);
            assertThat(down.pieces().get(15))
                    .isEqualTo(new Piece(
                            "model.layers.3.mlp.experts.15.down_proj.weight",
                            0,
                            (long) r * inter,
                            512,
                            inter,
                            15L * 512));
            assertThat(down.coveredRows()).isEqualTo(down.rows());
            assertThat(gu.coveredRows()).isEqualTo(gu.rows());
        }
    }

    /** The ranks together hold every parameter once, the replicated norms and routers once per rank. */
    @ParameterizedTest
    @ValueSource(ints = {1, 2})
    void bytesAddUpToTheParameters(int tp) {
        ModelConfig c = parse(MIXTRAL);
        TpLayout l = TpLayout.of(c, tp);
        long sum = 0;
        for (int r = 0; r < tp; r++) {
            sum += ShardPlan.deviceBytes(l, r);
        }
        long h = c.hiddenSize();
        long replicatedPerRank = c.numLayers() * (2 * h + 8 * h) + h; // norms, routers, final norm
        assertThat(sum).isEqualTo((c.parameterCount() + (tp - 1) * replicatedPerRank) * 2);
        // Mixtral: 3 layers x (attention + 8 experts x 3 x 512 x 702 + router) + embeddings
        long attn = h * (512 + 2 * 128) + 512 * h;
        long layer = attn + 2 * h + 8L * 3 * h * 702 + 8 * h;
        assertThat(c.parameterCount()).isEqualTo(2L * 4096 * h + 3 * layer + h);
    }

    @Test
    void expectedShapesNameEveryExpert() {
        ModelConfig c = parse(MIXTRAL);
        Map<String, long[]> s = ShardPlan.expectedShapes(c);
        assertThat(s.get("model.layers.2.block_sparse_moe.gate.weight")).containsExactly(8, 512);
        assertThat(s.get("model.layers.2.block_sparse_moe.experts.7.w1.weight")).containsExactly(702, 512);
        assertThat(s.get("model.layers.2.block_sparse_moe.experts.7.w3.weight")).containsExactly(702, 512);
        assertThat(s.get("model.layers.2.block_sparse_moe.experts.7.w2.weight")).containsExactly(512, 702);
        assertThat(s.keySet()).noneMatch(k -> k.contains("mlp.gate_proj"));
        List<String> experts =
                s.keySet().stream().filter(k -> k.contains(".experts.")).toList();
        assertThat(experts).hasSize(3 * 8 * 3);
    }
}
