package io.tensorlane.runtime.model;

import static io.tensorlane.runtime.model.Fp8ShardsTest.f32;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.SafetensorsWriter.T;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * FP8 experts: the stacked expert tensors of a block-scaled Qwen3-MoE checkpoint sharded over TP exactly as the bf16
 * experts are, their scale grids assembled from each expert's own grid, the router kept in the model's dtype, and the
 * TP sizes whose share of an expert cuts the 128x128 scale blocks refused with a message naming why.
 */
class MoeFp8ShardsTest {
    /** Qwen3-30B-A3B-FP8's geometry (the Hub's config.json, two of its 48 layers), block-scaled as on the Hub. */
    static final String QWEN3_30B_A3B_FP8 = """
            {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
             "intermediate_size": 6144, "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8,
             "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "num_hidden_layers": 2,
             "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 151936,
             "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
             "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_sliding_window": false,
             "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
               "weight_block_size": [128, 128]}}
            """;

    /** A tiny Qwen3-MoE: hidden 128, 4 heads of 32 (2 KV heads), 4 experts of 256, top-2, one layer, vocab 64. */
    static final String TINY = """
            {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 128,
             "intermediate_size": 256, "moe_intermediate_size": 256, "num_experts": 4, "num_experts_per_tok": 2,
             "norm_topk_prob": true, "decoder_sparse_step": 1, "mlp_only_layers": [], "num_hidden_layers": 1,
             "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 64,
             "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
             "tie_word_embeddings": false, "dtype": "bfloat16", "use_sliding_window": false,
             "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8",
               "weight_block_size": [128, 128], "modules_to_not_convert": SKIP}}
            """;

    /** The tiny model's attention is left in bf16 (its 128-wide o_proj cannot split by blocks), as the config says. */
    static final String SKIP = "[\"lm_head\", \"self_attn\"]";

    static ModelConfig tiny(String skip) {
        return ModelConfig.parse(TINY.replace("SKIP", skip), "config.json");
    }

    static Map<String, DeviceTensor> plan(ModelConfig c, int tp, int rank) {
        return ShardPlan.forRank(TpLayout.of(c, tp), rank).stream()
                .collect(Collectors.toMap(DeviceTensor::key, t -> t));
    }

    /** Which layout the stacked experts take at each TP size, or why it is refused (Qwen3-30B-A3B-FP8: 768 / TP). */
    @Test
    void qwen3_30bA3bFp8LoadsAtTp1And2AndIsRefusedAt4And8() {
        ModelConfig c = ModelConfig.parse(QWEN3_30B_A3B_FP8, "config.json");
        assertThat(ShardPlan.fp8Experts(c)).isTrue();
        record Row(int tp, WeightType gateUp, WeightType down, String refusal) {}
        List<Row> rows = List.of(
                new Row(1, WeightType.FP8_BLOCK, WeightType.FP8_BLOCK, null),
                new Row(2, WeightType.FP8_BLOCK, WeightType.FP8_BLOCK, null),
                new Row(
                        4,
                        null,
                        null,
                        "rank 0 would hold columns [0, 192) of model.layers.0.mlp.experts.0.down_proj"
                                + ".weight [2048, 768], which cuts its 128x128 scale blocks; each rank's share of an expert's "
                                + "down projection columns (the experts' intermediate size 768 / 4 = 192, "
                                + "moe_intermediate_size in config.json) must be a multiple of 128"),
                new Row(8, null, null, "(the experts' intermediate size 768 / 8 = 96, moe_intermediate_size"));
        for (Row r : rows) {
            if (r.refusal() != null) {
                assertThatThrownBy(() -> ShardPlan.forRank(TpLayout.of(c, r.tp()), 0))
                        .as("TP " + r.tp())
                        .isInstanceOf(ModelException.class)
                        .hasMessageContaining("block-scaled FP8 at tensor parallel size " + r.tp())
                        .hasMessageContaining(r.refusal());
                continue;
            }
            long inter = 768 / r.tp();
            for (int rank = 0; rank < r.tp(); rank++) {
                Map<String, DeviceTensor> p = plan(c, r.tp(), rank);
                DeviceTensor gu = p.get("layers.1.experts_gate_up");
                DeviceTensor down = p.get("layers.1.experts_down");
                assertThat(gu.type()).as("TP " + r.tp()).isEqualTo(r.gateUp());
                assertThat(down.type()).as("TP " + r.tp()).isEqualTo(r.down());
                assertThat(p.get("layers.1.router").type()).isEqualTo(WeightType.DENSE);
                // one scale piece per expert projection; expert 5's up: block rows of this rank's share
                assertThat(gu.scales()).hasSize(2 * 128);
                assertThat(gu.scales().get(2 * 5 + 1))
                        .isEqualTo(new ScalePiece(
                                "model.layers.1.mlp.experts.5.up_proj.weight_scale_inv",
                                16,
                                rank * inter / 128,
                                0,
                                inter / 128,
                                16,
                                (5 * 2 * inter + inter) / 128,
                                false,
                                1));
                assertThat(down.scales().get(7))
                        .isEqualTo(new ScalePiece(
                                "model.layers.1.mlp.experts.7.down_proj.weight_scale_inv",
                                6,
                                0,
                                rank * inter / 128,
                                16,
                                inter / 128,
                                7 * 16,
                                false,
                                1));
                // one byte a weight plus the fp32 grid: 1/16384 more
                assertThat(gu.bytes(WeightDType.BF16))
                        .isEqualTo(128 * 2 * inter * 2048 + 4L * 128 * 2 * inter / 128 * 16);
            }
        }
    }

    /** The tiny model at TP 4: 64 columns of an expert's down projection per rank cut the 128-column blocks. */
    @Test
    void tinyModelSplitsAtTp2AndIsRefusedAtTp4() {
        ModelConfig c = tiny(SKIP);
        assertThat(plan(c, 2, 1).get("layers.0.experts_gate_up").type()).isEqualTo(WeightType.FP8_BLOCK);
        assertThatThrownBy(() -> ShardPlan.forRank(TpLayout.of(c, 4), 0))
                .hasMessageContaining("columns [0, 64) of model.layers.0.mlp.experts.0.down_proj.weight [128, 256]")
                .hasMessageContaining("256 / 4 = 64");
    }

    /**
     * A checkpoint as transformers' writer lays it out (scale grids with a side of 1 stored squeezed, {@code [2]} for
     * [2, 1]), every grid cell 1000 x (projection + 1) + 100 x expert + 10 x row + column, so each assembled cell says
     * where it came from.
     */
    static List<T> tinyCheckpoint() {
        String p = "model.layers.0.";
        List<T> t = new ArrayList<>();
        t.add(T.of("model.embed_tokens.weight", "BF16", 64, 128));
        t.add(T.of(p + "input_layernorm.weight", "BF16", 128));
        t.add(T.of(p + "post_attention_layernorm.weight", "BF16", 128));
        t.add(T.of(p + "self_attn.q_norm.weight", "BF16", 32));
        t.add(T.of(p + "self_attn.k_norm.weight", "BF16", 32));
        for (String a : List.of("q_proj", "k_proj", "v_proj", "o_proj")) {
            boolean kv = a.equals("k_proj") || a.equals("v_proj");
            t.add(T.of(p + "self_attn." + a + ".weight", "BF16", kv ? 64 : 128, 128));
        }
        t.add(T.of(p + "mlp.gate.weight", "BF16", 4, 128));
        String[] proj = {"gate_proj", "up_proj", "down_proj"};
        for (int e = 0; e < 4; e++) {
            for (int j = 0; j < 3; j++) {
                boolean down = j == 2;
                String w = p + "mlp.experts." + e + "." + proj[j] + ".weight";
                t.add(T.of(w, "F8_E4M3", down ? 128 : 256, down ? 256 : 128));
                float base = 1000 * (j + 1) + 100 * e;
                float[] g = down ? new float[] {base, base + 1} : new float[] {base, base + 10};
                long[] shape = e % 2 == 0 ? new long[] {2} : down ? new long[] {1, 2} : new long[] {2, 1};
                t.add(new T(w + "_scale_inv", "F32", shape, f32(g)));
            }
        }
        t.add(T.of("model.norm.weight", "BF16", 128));
        t.add(T.of("lm_head.weight", "BF16", 64, 128));
        return t;
    }

    static Checkpoint write(Path dir, String config, List<T> tensors) throws IOException {
        Files.writeString(dir.resolve("config.json"), config);
        return ShardPlanTest.checkpoint(dir, tensors);
    }

    @Test
    void tinyCheckpointValidatesAndItsExpertGridsAssemble(@TempDir Path dir) throws IOException {
        try (Checkpoint ck = write(dir, TINY.replace("SKIP", SKIP), tinyCheckpoint())) {
            ModelConfig c = ModelConfig.read(dir);
            assertThat(c.quantization().method()).isEqualTo(Quantization.Method.FP8_BLOCK);
            ShardPlan.validate(ck, c);
            // TP 1: each expert's gate block rows, then its up block rows
            Map<String, DeviceTensor> one = plan(c, 1, 0);
            assertThat(ScaleGrid.build(ck, one.get("layers.0.experts_gate_up")))
                    .containsExactly(
                            1000, 1010, 2000, 2010, 1100, 1110, 2100, 2110, 1200, 1210, 2200, 2210, 1300, 1310, 2300,
                            2310);
            assertThat(ScaleGrid.build(ck, one.get("layers.0.experts_down")))
                    .containsExactly(3000, 3001, 3100, 3101, 3200, 3201, 3300, 3301);
            // TP 2, rank 1: the second block row of each gate and up, the second block column of each down
            Map<String, DeviceTensor> r1 = plan(c, 2, 1);
            assertThat(ScaleGrid.build(ck, r1.get("layers.0.experts_gate_up")))
                    .containsExactly(1010, 2010, 1110, 2110, 1210, 2210, 1310, 2310);
            assertThat(ScaleGrid.build(ck, r1.get("layers.0.experts_down"))).containsExactly(3001, 3101, 3201, 3301);
            DeviceTensor router = r1.get("layers.0.router");
            assertThat(router.type()).isEqualTo(WeightType.DENSE);
            assertThat(router.pieces()).containsExactly(new Piece("model.layers.0.mlp.gate.weight", 0, 0, 4, 128, 0));
            assertThat(r1.get("layers.0.experts_down").pieces().get(3))
                    .isEqualTo(new Piece("model.layers.0.mlp.experts.3.down_proj.weight", 0, 128, 128, 128, 3 * 128));
        }
    }

    /** The router stays in the model's dtype; an expert missing its scales or stored in bf16 is named. */
    @Test
    void validateNamesAnFp8RouterAndExpertsWithoutScales(@TempDir Path dir) throws IOException {
        String p = "model.layers.0.mlp.";
        List<T> t =
                ShardPlanTest.replace(tinyCheckpoint(), p + "gate.weight", T.of(p + "gate.weight", "F8_E4M3", 4, 128));
        t = ShardPlanTest.replace(t, p + "experts.3.down_proj.weight_scale_inv", null);
        t = ShardPlanTest.replace(
                t, p + "experts.2.up_proj.weight", T.of(p + "experts.2.up_proj.weight", "BF16", 256, 128));
        try (Checkpoint ck = write(dir, TINY.replace("SKIP", SKIP), t)) {
            ModelConfig c = ModelConfig.read(dir);
            assertThatThrownBy(() -> ShardPlan.validate(ck, c))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("tensor " + p + "gate.weight has dtype F8_E4M3, expected BF16")
                    .hasMessageContaining("not norms, embeddings or the MoE router")
                    .hasMessageContaining("missing scale tensor " + p + "experts.3.down_proj.weight_scale_inv, "
                            + "expected shape [1, 2] F32")
                    .hasMessageContaining("tensor " + p + "experts.2.up_proj.weight has dtype BF16, expected F8_E4M3");
        }
    }

    /**
     * modules_to_not_convert: experts named there stay in the model's dtype (the FP8 checkpoint then fails validation
     * naming them); some experts of one layer left out and others not cannot be stacked into one tensor.
     */
    @Test
    void modulesToNotConvertCoverExperts(@TempDir Path dir) throws IOException {
        ModelConfig dense = tiny("[\"lm_head\", \"self_attn\", \"mlp.experts\"]");
        assertThat(ShardPlan.fp8Experts(dense)).isFalse();
        Map<String, DeviceTensor> p = plan(dense, 2, 0);
        assertThat(p.get("layers.0.experts_gate_up").type()).isEqualTo(WeightType.DENSE);
        assertThat(p.get("layers.0.qkv").type()).isEqualTo(WeightType.DENSE);
        assertThat(plan(tiny("[\"lm_head\"]"), 1, 0).get("layers.0.qkv").type().fp8())
                .isTrue();
        try (Checkpoint ck =
                write(dir, TINY.replace("SKIP", "[\"lm_head\", \"self_attn\", \"mlp.experts\"]"), tinyCheckpoint())) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, ModelConfig.read(dir)))
                    .hasMessageContaining(
                            "tensor model.layers.0.mlp.experts.0.gate_proj.weight has dtype F8_E4M3, expected BF16");
        }
        // down_proj left in bf16, gate/up FP8: each stacked tensor as its projections are stored
        ModelConfig downDense = tiny("[\"lm_head\", \"self_attn\", \"down_proj\"]");
        assertThat(ShardPlan.fp8Experts(downDense)).isTrue();
        Map<String, DeviceTensor> dd = plan(downDense, 2, 1);
        assertThat(dd.get("layers.0.experts_gate_up").type()).isEqualTo(WeightType.FP8_BLOCK);
        assertThat(dd.get("layers.0.experts_down").type()).isEqualTo(WeightType.DENSE);
        ModelConfig mixed = tiny("[\"lm_head\", \"self_attn\", \"mlp.experts.1.\"]");
        assertThatThrownBy(() -> ShardPlan.forRank(TpLayout.of(mixed, 1), 0))
                .hasMessageContaining("layers.0.experts_gate_up fuses model.layers.0.mlp.experts.0.gate_proj.weight "
                        + "(FP8_BLOCK) and model.layers.0.mlp.experts.1.gate_proj.weight (DENSE)");
    }
}
