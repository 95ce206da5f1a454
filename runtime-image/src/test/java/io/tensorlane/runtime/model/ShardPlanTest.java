package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.SafetensorsWriter.T;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ShardPlanTest {
    /** hidden 16, intermediate 32, 2 layers, 4 heads / 2 kv heads of 4, vocabulary 30 (padded at tp 4). */
    static final ModelConfig SMALL = TestConfigs.of(Architecture.LLAMA, 16, 32, 2, 4, 2, 4, 30, false);

    static Map<String, DeviceTensor> plan(ModelConfig c, int tp, int rank) {
        return ShardPlan.forRank(TpLayout.of(c, tp), rank).stream()
                .collect(Collectors.toMap(
                        DeviceTensor::key, Function.identity(), (a, b) -> a, java.util.LinkedHashMap::new));
    }

    @Test
    void keysInOrder() {
        assertThat(plan(SMALL, 1, 0).keySet())
                .containsExactly(
                        "embed",
                        "layers.0.input_norm",
                        "layers.0.qkv",
                        "layers.0.o",
                        "layers.0.post_norm",
                        "layers.0.gate_up",
                        "layers.0.down",
                        "layers.1.input_norm",
                        "layers.1.qkv",
                        "layers.1.o",
                        "layers.1.post_norm",
                        "layers.1.gate_up",
                        "layers.1.down",
                        "final_norm",
                        "lm_head");
        ModelConfig qwen3 = TestConfigs.of(Architecture.QWEN3, 16, 32, 1, 4, 2, 8, 30, true);
        assertThat(plan(qwen3, 1, 0).keySet())
                .containsExactly(
                        "embed",
                        "layers.0.input_norm",
                        "layers.0.qkv",
                        "layers.0.q_norm",
                        "layers.0.k_norm",
                        "layers.0.o",
                        "layers.0.post_norm",
                        "layers.0.gate_up",
                        "layers.0.down",
                        "final_norm",
                        "lm_head");
        ModelConfig qwen2 = TestConfigs.of(Architecture.QWEN2, 16, 32, 1, 4, 2, 4, 30, false);
        assertThat(plan(qwen2, 1, 0).keySet()).contains("layers.0.qkv_bias").doesNotContain("layers.0.q_norm");
    }

    @Test
    void tp1IsTheWholeCheckpoint() {
        Map<String, DeviceTensor> p = plan(SMALL, 1, 0);
        assertThat(p.get("embed"))
                .isEqualTo(new DeviceTensor("embed", 30, 16, List.of(new Piece(ShardPlan.EMBED, 0, 0, 30, 16, 0))));
        assertThat(p.get("layers.1.qkv"))
                .isEqualTo(new DeviceTensor(
                        "layers.1.qkv",
                        32,
                        16,
                        List.of(
                                new Piece("model.layers.1.self_attn.q_proj.weight", 0, 0, 16, 16, 0),
                                new Piece("model.layers.1.self_attn.k_proj.weight", 0, 0, 8, 16, 16),
                                new Piece("model.layers.1.self_attn.v_proj.weight", 0, 0, 8, 16, 24))));
        assertThat(p.get("layers.0.o").pieces())
                .containsExactly(new Piece("model.layers.0.self_attn.o_proj.weight", 0, 0, 16, 16, 0));
        assertThat(p.get("layers.0.input_norm"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.input_norm",
                        16,
                        1,
                        List.of(new Piece("model.layers.0.input_layernorm.weight", 0, 0, 16, 1, 0))));
        assertThat(p.get("final_norm").pieces()).containsExactly(new Piece("model.norm.weight", 0, 0, 16, 1, 0));
        assertThat(p.get("lm_head").pieces()).containsExactly(new Piece("lm_head.weight", 0, 0, 30, 16, 0));
    }

    @Test
    void tp2Rank1Windows() {
        Map<String, DeviceTensor> p = plan(SMALL, 2, 1);
        // 2 q heads (rows 8..16), 1 kv head (head 1: rows 4..8)
        assertThat(p.get("layers.0.qkv"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.qkv",
                        16,
                        16,
                        List.of(
                                new Piece("model.layers.0.self_attn.q_proj.weight", 8, 0, 8, 16, 0),
                                new Piece("model.layers.0.self_attn.k_proj.weight", 4, 0, 4, 16, 8),
                                new Piece("model.layers.0.self_attn.v_proj.weight", 4, 0, 4, 16, 12))));
        assertThat(p.get("layers.0.o"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.o",
                        16,
                        8,
                        List.of(new Piece("model.layers.0.self_attn.o_proj.weight", 0, 8, 16, 8, 0))));
        assertThat(p.get("layers.0.gate_up"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.gate_up",
                        32,
                        16,
                        List.of(
                                new Piece("model.layers.0.mlp.gate_proj.weight", 16, 0, 16, 16, 0),
                                new Piece("model.layers.0.mlp.up_proj.weight", 16, 0, 16, 16, 16))));
        assertThat(p.get("layers.0.down"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.down",
                        16,
                        16,
                        List.of(new Piece("model.layers.0.mlp.down_proj.weight", 0, 16, 16, 16, 0))));
        assertThat(p.get("embed"))
                .isEqualTo(new DeviceTensor("embed", 15, 16, List.of(new Piece(ShardPlan.EMBED, 15, 0, 15, 16, 0))));
        assertThat(p.get("layers.0.post_norm").pieces())
                .containsExactly(new Piece("model.layers.0.post_attention_layernorm.weight", 0, 0, 16, 1, 0));
    }

    @Test
    void tp4ReplicatesKvHeadsAndPadsTheVocabulary() {
        for (int rank = 0; rank < 4; rank++) {
            Map<String, DeviceTensor> p = plan(SMALL, 4, rank);
            long kvRow = (rank / 2) * 4L; // ranks 0,1 hold kv head 0; ranks 2,3 kv head 1
            assertThat(p.get("layers.1.qkv"))
                    .as("rank %d", rank)
                    .isEqualTo(new DeviceTensor(
                            "layers.1.qkv",
                            12,
                            16,
                            List.of(
                                    new Piece("model.layers.1.self_attn.q_proj.weight", rank * 4L, 0, 4, 16, 0),
                                    new Piece("model.layers.1.self_attn.k_proj.weight", kvRow, 0, 4, 16, 4),
                                    new Piece("model.layers.1.self_attn.v_proj.weight", kvRow, 0, 4, 16, 8))));
            DeviceTensor embed = p.get("embed");
            assertThat(embed.rows()).isEqualTo(8);
            long real = rank < 3 ? 8 : 6;
            assertThat(embed.pieces()).containsExactly(new Piece(ShardPlan.EMBED, rank * 8L, 0, real, 16, 0));
            assertThat(p.get("lm_head").pieces())
                    .containsExactly(new Piece(ShardPlan.LM_HEAD, rank * 8L, 0, real, 16, 0));
            assertThat(embed.coveredRows()).isEqualTo(real);
        }
    }

    @Test
    void rankWithoutVocabularyRowsHasOnlyPadding() {
        ModelConfig tiny = TestConfigs.of(Architecture.LLAMA, 16, 32, 1, 4, 4, 4, 5, true);
        Map<String, DeviceTensor> last = plan(tiny, 4, 3);
        assertThat(last.get("embed")).isEqualTo(new DeviceTensor("embed", 2, 16, List.of()));
        assertThat(last.get("lm_head")).isEqualTo(new DeviceTensor("lm_head", 2, 16, List.of()));
        assertThat(plan(tiny, 4, 2).get("lm_head").pieces())
                .containsExactly(new Piece(ShardPlan.EMBED, 4, 0, 1, 16, 0));
    }

    @Test
    void tiedLmHeadReadsTheEmbedding() {
        ModelConfig tied = TestConfigs.of(Architecture.LLAMA, 16, 32, 1, 4, 2, 4, 30, true);
        Map<String, DeviceTensor> p = plan(tied, 2, 0);
        assertThat(p.get("lm_head"))
                .isEqualTo(new DeviceTensor("lm_head", 15, 16, List.of(new Piece(ShardPlan.EMBED, 0, 0, 15, 16, 0))));
        assertThat(ShardPlan.expectedShapes(tied)).doesNotContainKey(ShardPlan.LM_HEAD);
    }

    @Test
    void qwen3NormsAndQwen2Bias() {
        ModelConfig qwen3 = TestConfigs.of(Architecture.QWEN3, 16, 32, 1, 4, 2, 8, 30, true); // head_dim 8 != 16/4
        Map<String, DeviceTensor> p = plan(qwen3, 2, 1);
        assertThat(p.get("layers.0.q_norm"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.q_norm",
                        8,
                        1,
                        List.of(new Piece("model.layers.0.self_attn.q_norm.weight", 0, 0, 8, 1, 0))));
        assertThat(p.get("layers.0.k_norm").pieces())
                .containsExactly(new Piece("model.layers.0.self_attn.k_norm.weight", 0, 0, 8, 1, 0));
        assertThat(p.get("layers.0.qkv").rows()).isEqualTo((2 + 2) * 8);
        assertThat(p.get("layers.0.o"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.o",
                        16,
                        16,
                        List.of(new Piece("model.layers.0.self_attn.o_proj.weight", 0, 16, 16, 16, 0))));
        ModelConfig qwen2 = TestConfigs.of(Architecture.QWEN2, 16, 32, 1, 4, 2, 4, 30, false);
        assertThat(plan(qwen2, 2, 1).get("layers.0.qkv_bias"))
                .isEqualTo(new DeviceTensor(
                        "layers.0.qkv_bias",
                        16,
                        1,
                        List.of(
                                new Piece("model.layers.0.self_attn.q_proj.bias", 8, 0, 8, 1, 0),
                                new Piece("model.layers.0.self_attn.k_proj.bias", 4, 0, 4, 1, 8),
                                new Piece("model.layers.0.self_attn.v_proj.bias", 4, 0, 4, 1, 12))));
    }

    static Stream<Arguments> coverageCases() {
        List<Arguments> out = new ArrayList<>();
        List<ModelConfig> configs = List.of(
                SMALL,
                TestConfigs.of(Architecture.QWEN2, 16, 32, 2, 4, 2, 4, 30, false),
                TestConfigs.of(Architecture.QWEN3, 16, 32, 1, 4, 2, 8, 31, true),
                TestConfigs.of(Architecture.MISTRAL, 32, 64, 1, 8, 8, 4, 7, false),
                TestConfigs.of(Architecture.LLAMA, 32, 64, 1, 8, 1, 4, 13, true));
        for (ModelConfig c : configs) {
            for (int tp : new int[] {1, 2, 4}) {
                out.add(Arguments.of(
                        c.architecture() + " heads " + c.numHeads() + "/" + c.numKvHeads() + " tp " + tp, c, tp));
            }
        }
        return out.stream();
    }

    /** All ranks together read every cell of a split tensor once, every cell of a replicated one once per holder. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("coverageCases")
    void piecesOfAllRanksCoverEverySourceTensor(String name, ModelConfig c, int tp) {
        TpLayout l = TpLayout.of(c, tp);
        Map<String, long[]> shapes = ShardPlan.expectedShapes(c);
        Map<String, int[][]> counts = new HashMap<>();
        shapes.forEach((k, s) -> counts.put(k, new int[(int) s[0]][s.length == 1 ? 1 : (int) s[1]]));
        for (int rank = 0; rank < tp; rank++) {
            for (DeviceTensor t : ShardPlan.forRank(l, rank)) {
                boolean[] filled = new boolean[(int) t.rows()];
                for (Piece p : t.pieces()) {
                    int[][] grid = counts.get(p.source());
                    assertThat(grid)
                            .as("%s reads unknown source %s", t.key(), p.source())
                            .isNotNull();
                    assertThat(p.srcRowStart() + p.rows())
                            .as("%s rows of %s", t.key(), p.source())
                            .isLessThanOrEqualTo(grid.length);
                    assertThat(p.srcColStart() + p.cols())
                            .as("%s cols of %s", t.key(), p.source())
                            .isLessThanOrEqualTo(grid[0].length);
                    assertThat(p.cols()).isEqualTo(t.cols());
                    for (long r = 0; r < p.rows(); r++) {
                        assertThat(filled[(int) (p.dstRowStart() + r)])
                                .as("%s row %d filled twice", t.key(), p.dstRowStart() + r)
                                .isFalse();
                        filled[(int) (p.dstRowStart() + r)] = true;
                        for (long col = 0; col < p.cols(); col++) {
                            counts.get(p.source())[(int) (p.srcRowStart() + r)][(int) (p.srcColStart() + col)]++;
                        }
                    }
                }
                if (!t.key().equals("embed") && !t.key().equals("lm_head")) {
                    assertThat(t.coveredRows()).as("%s fully covered", t.key()).isEqualTo(t.rows());
                }
            }
        }
        int kvCopies = Math.max(1, tp / c.numKvHeads());
        counts.forEach((source, grid) -> {
            int want;
            if (source.endsWith("norm.weight") || source.endsWith("layernorm.weight")) {
                want = tp; // replicated on every rank
            } else if (source.contains("k_proj") || source.contains("v_proj")) {
                want = kvCopies;
            } else if (source.equals(ShardPlan.EMBED) && c.tieWordEmbeddings()) {
                want = 2; // embed and lm_head
            } else {
                want = 1;
            }
            for (int[] row : grid) {
                for (int n : row) {
                    assertThat(n).as("%s cell read count", source).isEqualTo(want);
                }
            }
        });
    }

    @Test
    void deviceBytesOfAllRanksAddUpAtTp1() {
        ModelConfig c = ModelConfigTest.load("llama-3.1-8b-instruct.json");
        assertThat(ShardPlan.deviceBytes(TpLayout.of(c, 1), 0)).isEqualTo(c.parameterCount() * 2);
        long sum = 0;
        for (int r = 0; r < 8; r++) {
            sum += ShardPlan.deviceBytes(TpLayout.of(c, 8), r);
        }
        // norms are replicated 8 times, kv heads are not (8 kv heads at tp 8)
        long norms = (2L * c.numLayers() + 1) * c.hiddenSize();
        assertThat(sum).isEqualTo((c.parameterCount() + 7 * norms) * 2);
    }

    // ---- validate ------------------------------------------------------------------------------------------------

    /** The Hugging Face tensors of a Qwen2-style model, listed by hand (independent of ShardPlan.expectedShapes). */
    static List<T> hfTensors(ModelConfig c, String dtype) {
        long h = c.hiddenSize();
        long q = (long) c.numHeads() * c.headDim();
        long kv = (long) c.numKvHeads() * c.headDim();
        long in = c.intermediateSize();
        List<T> t = new ArrayList<>();
        t.add(T.of("model.embed_tokens.weight", dtype, c.vocabSize(), h));
        for (int i = 0; i < c.numLayers(); i++) {
            String p = "model.layers." + i + ".";
            t.add(T.of(p + "input_layernorm.weight", dtype, h));
            t.add(T.of(p + "self_attn.q_proj.weight", dtype, q, h));
            t.add(T.of(p + "self_attn.q_proj.bias", dtype, q));
            t.add(T.of(p + "self_attn.k_proj.weight", dtype, kv, h));
            t.add(T.of(p + "self_attn.k_proj.bias", dtype, kv));
            t.add(T.of(p + "self_attn.v_proj.weight", dtype, kv, h));
            t.add(T.of(p + "self_attn.v_proj.bias", dtype, kv));
            t.add(T.of(p + "self_attn.o_proj.weight", dtype, h, q));
            t.add(T.of(p + "post_attention_layernorm.weight", dtype, h));
            t.add(T.of(p + "mlp.gate_proj.weight", dtype, in, h));
            t.add(T.of(p + "mlp.up_proj.weight", dtype, in, h));
            t.add(T.of(p + "mlp.down_proj.weight", dtype, h, in));
            t.add(T.of(p + "self_attn.rotary_emb.inv_freq", "F32", c.headDim() / 2)); // old checkpoints: ignored
        }
        t.add(T.of("model.norm.weight", dtype, h));
        t.add(T.of("lm_head.weight", dtype, c.vocabSize(), h));
        return t;
    }

    static final ModelConfig QWEN2 = TestConfigs.of(Architecture.QWEN2, 16, 32, 2, 4, 2, 4, 30, false);

    static Checkpoint checkpoint(Path dir, List<T> tensors) {
        SafetensorsWriter.write(dir.resolve("model.safetensors"), tensors);
        return Checkpoint.open(dir);
    }

    static List<T> replace(List<T> tensors, String name, T with) {
        List<T> out = new ArrayList<>();
        for (T t : tensors) {
            if (!t.name().equals(name)) {
                out.add(t);
            } else if (with != null) {
                out.add(with);
            }
        }
        return out;
    }

    @Test
    void validCheckpointPasses(@TempDir Path dir) {
        assertThat(ShardPlan.expectedShapes(QWEN2)).hasSize(1 + 2 * 12 + 2);
        try (Checkpoint ck = checkpoint(dir, hfTensors(QWEN2, "BF16"))) {
            ShardPlan.validate(ck, QWEN2);
        }
    }

    @Test
    void missingTensor(@TempDir Path dir) {
        try (Checkpoint ck =
                checkpoint(dir, replace(hfTensors(QWEN2, "BF16"), "model.layers.1.mlp.up_proj.weight", null))) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, QWEN2))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("does not match its config (Qwen2ForCausalLM)")
                    .hasMessageContaining(
                            "missing tensor model.layers.1.mlp.up_proj.weight, expected shape [32, 16] BF16");
        }
    }

    @Test
    void missingLmHeadWhenNotTied(@TempDir Path dir) {
        try (Checkpoint ck = checkpoint(dir, replace(hfTensors(QWEN2, "BF16"), "lm_head.weight", null))) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, QWEN2))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("missing tensor lm_head.weight (tie_word_embeddings is false)");
        }
    }

    @Test
    void wrongShape(@TempDir Path dir) {
        String k = "model.layers.0.self_attn.k_proj.weight";
        try (Checkpoint ck = checkpoint(dir, replace(hfTensors(QWEN2, "BF16"), k, T.of(k, "BF16", 16, 16)))) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, QWEN2))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("tensor " + k + " has shape [16, 16], expected [8, 16]");
        }
    }

    @Test
    void oneDimensionalWhereTwoExpected(@TempDir Path dir) {
        String n = "model.norm.weight";
        try (Checkpoint ck = checkpoint(dir, replace(hfTensors(QWEN2, "BF16"), n, T.of(n, "BF16", 1, 16)))) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, QWEN2))
                    .hasMessageContaining("tensor model.norm.weight has shape [1, 16], expected [16]");
        }
    }

    @Test
    void wrongDtype(@TempDir Path dir) {
        try (Checkpoint ck = checkpoint(dir, hfTensors(QWEN2, "F16"))) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, QWEN2))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining(
                            "tensor model.embed_tokens.weight has dtype F16, expected BF16 (config dtype bfloat16)")
                    .hasMessageEndingWith("; and 7 more");
        }
    }
}
