package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.SafetensorsWriter.T;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class Fp8ShardsTest {
    static final Quantization BLOCK = QuantizationParser.parse(QuantizationTest.json(QuantizationTest.QWEN3_FP8));
    static final Quantization CHANNEL = QuantizationParser.parse(
            QuantizationTest.json(QuantizationTest.FP8_DYNAMIC.replace(", 're:.*layers\\\\.1\\\\.mlp.*'", "")));
    static final Quantization TENSOR = QuantizationParser.parse(
            QuantizationTest.json(QuantizationTest.FP8_DYNAMIC.replace("'channel'", "'tensor'")));

    static ModelConfig llama8b(Quantization q) {
        return TestConfigs.quantized(ModelConfigTest.load("llama-3.1-8b-instruct.json"), q);
    }

    /** Every rank's scale pieces read each cell of each source scale grid once (k/v: once per holder of the head). */
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 4, 8})
    void blockScaleGridsCoverEverySourceGridOnce(int tp) {
        ModelConfig c = llama8b(BLOCK);
        TpLayout l = TpLayout.of(c, tp);
        Map<String, long[]> shapes = ShardPlan.expectedShapes(c);
        Map<String, int[][]> counts = new HashMap<>();
        for (int rank = 0; rank < tp; rank++) {
            for (DeviceTensor t : ShardPlan.forRank(l, rank)) {
                boolean linear = t.key().matches("layers\\.\\d+\\.(qkv|o|gate_up|down)");
                assertThat(t.type()).as(t.key()).isEqualTo(linear ? WeightType.FP8_BLOCK : WeightType.DENSE);
                if (!linear) {
                    continue;
                }
                boolean[][] filled = new boolean[(int) t.type().scaleRows(t.rows())]
                        [(int) t.type().scaleCols(t.cols())];
                for (ScalePiece s : t.scales()) {
                    String weight = s.source().replace("weight_scale_inv", "weight");
                    long[] ws = shapes.get(weight);
                    assertThat(s.sourceCols()).isEqualTo((ws[1] + 127) / 128);
                    int[][] grid = counts.computeIfAbsent(
                            s.source(), k -> new int[(int) ((ws[0] + 127) / 128)][(int) ((ws[1] + 127) / 128)]);
                    for (long r = 0; r < s.rows(); r++) {
                        for (long col = 0; col < s.cols(); col++) {
                            assertThat(filled[(int) (s.dstRowStart() + r)][(int) col])
                                    .isFalse();
                            filled[(int) (s.dstRowStart() + r)][(int) col] = true;
                            grid[(int) (s.srcRowStart() + r)][(int) (s.srcColStart() + col)]++;
                        }
                    }
                }
                for (boolean[] row : filled) {
                    for (boolean f : row) {
                        assertThat(f).as("%s scale grid fully filled", t.key()).isTrue();
                    }
                }
            }
        }
        assertThat(counts).hasSize(7 * c.numLayers());
        counts.forEach((source, grid) -> {
            int want = source.contains("k_proj") || source.contains("v_proj") ? Math.max(1, tp / c.numKvHeads()) : 1;
            for (int[] row : grid) {
                for (int n : row) {
                    assertThat(n).as("%s cell read count at tp %d", source, tp).isEqualTo(want);
                }
            }
        });
    }

    @Test
    void tp2Rank1GateUpScales() {
        DeviceTensor gu = find(ShardPlan.forRank(TpLayout.of(llama8b(BLOCK), 2), 1), "layers.5.gate_up");
        assertThat(gu.rows()).isEqualTo(2 * 7168);
        assertThat(gu.type().scaleRows(gu.rows())).isEqualTo(112);
        assertThat(gu.type().scaleCols(gu.cols())).isEqualTo(32);
        assertThat(gu.scales())
                .containsExactly(
                        new ScalePiece("model.layers.5.mlp.gate_proj.weight_scale_inv", 32, 56, 0, 56, 32, 0, false),
                        new ScalePiece("model.layers.5.mlp.up_proj.weight_scale_inv", 32, 56, 0, 56, 32, 56, false));
        DeviceTensor down = find(ShardPlan.forRank(TpLayout.of(llama8b(BLOCK), 2), 1), "layers.5.down");
        assertThat(down.scales())
                .containsExactly(
                        new ScalePiece("model.layers.5.mlp.down_proj.weight_scale_inv", 112, 0, 56, 32, 56, 0, false));
    }

    @Test
    void channelAndTensorScalesFollowTheRows() {
        DeviceTensor qkv = find(ShardPlan.forRank(TpLayout.of(llama8b(CHANNEL), 2), 1), "layers.0.qkv");
        assertThat(qkv.type()).isEqualTo(WeightType.FP8_ROW);
        assertThat(qkv.scales())
                .containsExactly(
                        new ScalePiece("model.layers.0.self_attn.q_proj.weight_scale", 1, 2048, 0, 2048, 1, 0, false),
                        new ScalePiece("model.layers.0.self_attn.k_proj.weight_scale", 1, 512, 0, 512, 1, 2048, false),
                        new ScalePiece("model.layers.0.self_attn.v_proj.weight_scale", 1, 512, 0, 512, 1, 2560, false));
        DeviceTensor t = find(ShardPlan.forRank(TpLayout.of(llama8b(TENSOR), 2), 1), "layers.0.qkv");
        assertThat(t.scales())
                .containsExactly(
                        new ScalePiece("model.layers.0.self_attn.q_proj.weight_scale", 1, 0, 0, 2048, 1, 0, true),
                        new ScalePiece("model.layers.0.self_attn.k_proj.weight_scale", 1, 0, 0, 512, 1, 2048, true),
                        new ScalePiece("model.layers.0.self_attn.v_proj.weight_scale", 1, 0, 0, 512, 1, 2560, true));
    }

    @Test
    void deviceBytesCountFp8AndScales() {
        ModelConfig c = llama8b(BLOCK);
        long h = 4096;
        long linearElems = h * (4096 + 2 * 1024) + 4096 * h + 3 * h * 14336;
        long scales = 32 * 32 + 2 * 8 * 32 + 32 * 32 + 2 * 112 * 32 + 32 * 112;
        long per = linearElems + 4 * scales + 2 * (2 * h);
        long rest = 2 * (2L * 128256 * h + h);
        assertThat(ShardPlan.deviceBytes(TpLayout.of(c, 1), 0)).isEqualTo(32 * per + rest);
        assertThat(ShardPlan.deviceBytes(TpLayout.of(c, 1), 0))
                .isLessThan(ShardPlan.deviceBytes(TpLayout.of(llama8b(Quantization.NONE), 1), 0) * 6 / 10);
    }

    @Test
    void rowsOffTheBlocksGetPerRowScalesColumnsAreRefused() {
        // a Qwen3-like geometry: intermediate 1536 is 192 rows (and down columns) a rank at tp 8
        ModelConfig q3 =
                TestConfigs.quantized(TestConfigs.of(Architecture.QWEN3, 512, 1536, 2, 8, 8, 128, 4096, false), BLOCK);
        assertThat(find(ShardPlan.forRank(TpLayout.of(q3, 4), 3), "layers.0.gate_up")
                        .type())
                .isEqualTo(WeightType.FP8_BLOCK); // 384 a rank: whole blocks
        assertThatThrownBy(() -> ShardPlan.forRank(TpLayout.of(q3, 8), 0))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining(
                        "block-scaled FP8 at tensor parallel size 8: rank 0 would hold columns [0, 192) of "
                                + "model.layers.0.mlp.down_proj.weight [512, 1536], which cuts its 128x128 scale blocks");
        // head dim 64 at tp 2: a rank's kv head is half a block of rows: per-row scales
        ModelConfig hd64 =
                TestConfigs.quantized(TestConfigs.of(Architecture.LLAMA, 512, 1024, 1, 8, 2, 64, 4096, true), BLOCK);
        DeviceTensor qkv = find(ShardPlan.forRank(TpLayout.of(hd64, 2), 1), "layers.0.qkv");
        assertThat(qkv.type()).isEqualTo(WeightType.FP8_BLOCK_ROWS);
        assertThat(qkv.scales())
                .containsExactly(
                        new ScalePiece(
                                "model.layers.0.self_attn.q_proj.weight_scale_inv", 4, 256, 0, 256, 4, 0, false, 128),
                        new ScalePiece(
                                "model.layers.0.self_attn.k_proj.weight_scale_inv", 4, 64, 0, 64, 4, 256, false, 128),
                        new ScalePiece(
                                "model.layers.0.self_attn.v_proj.weight_scale_inv", 4, 64, 0, 64, 4, 320, false, 128));
        assertThat(qkv.scaleCount()).isEqualTo(384 * 4);
        // per-channel scales split anywhere
        DeviceTensor ch =
                find(ShardPlan.forRank(TpLayout.of(TestConfigs.quantized(hd64, CHANNEL), 2), 1), "layers.0.qkv");
        assertThat(ch.type()).isEqualTo(WeightType.FP8_ROW);
        assertThat(ch.scales().get(1))
                .isEqualTo(new ScalePiece("model.layers.0.self_attn.k_proj.weight_scale", 1, 64, 0, 64, 1, 256, false));
    }

    @Test
    void columnWindowsMustStartOnABlock() {
        ModelConfig c = llama8b(BLOCK);
        Map<String, long[]> shapes = ShardPlan.expectedShapes(c);
        Piece p = new Piece("model.layers.0.mlp.down_proj.weight", 0, 64, 4096, 128, 0);
        assertThatThrownBy(() -> Fp8Shards.linear(TpLayout.of(c, 1), 0, "x", 4096, 128, List.of(p), shapes))
                .hasMessageContaining("columns [64, 192) of model.layers.0.mlp.down_proj.weight [4096, 14336]");
        // dims that are not multiples of 128 at tp 1: partial edge blocks; the parts after q (448 rows) and gate (1200)
        // start inside a block row: per-row scales; o and down keep the compact grid
        ModelConfig odd =
                TestConfigs.quantized(TestConfigs.of(Architecture.LLAMA, 448, 1200, 1, 7, 1, 64, 300, false), BLOCK);
        List<DeviceTensor> plan = ShardPlan.forRank(TpLayout.of(odd, 1), 0);
        DeviceTensor gu = find(plan, "layers.0.gate_up");
        assertThat(gu.type()).isEqualTo(WeightType.FP8_BLOCK_ROWS);
        assertThat(gu.scales().get(1))
                .isEqualTo(new ScalePiece(
                        "model.layers.0.mlp.up_proj.weight_scale_inv", 4, 0, 0, 1200, 4, 1200, false, 128));
        assertThat(find(plan, "layers.0.down").type()).isEqualTo(WeightType.FP8_BLOCK);
        assertThat(find(plan, "layers.0.down").scales())
                .containsExactly(
                        new ScalePiece("model.layers.0.mlp.down_proj.weight_scale_inv", 10, 0, 0, 4, 10, 0, false));
    }

    @Test
    void partsOfAFusedLinearMustBeStoredAlike() {
        Quantization q = QuantizationParser.parse(
                QuantizationTest.json(QuantizationTest.QWEN3_FP8.replace("['lm_head']", "['q_proj']")));
        assertThatThrownBy(() -> ShardPlan.forRank(TpLayout.of(llama8b(q), 1), 0))
                .hasMessageContaining("layers.0.qkv fuses model.layers.0.self_attn.q_proj.weight (DENSE) and "
                        + "model.layers.0.self_attn.k_proj.weight (FP8_BLOCK)");
    }

    // ---- a real checkpoint: validate and the host scale grids ----------------------------------------------------

    /** hidden 256, intermediate 512, 2 heads of 128 (kv 1), vocab 64, one layer. */
    static final ModelConfig SMALL = TestConfigs.of(Architecture.LLAMA, 256, 512, 1, 2, 1, 128, 64, false);

    static byte[] f32(float... v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    static byte[] bf16(float... v) {
        ByteBuffer b = ByteBuffer.allocate(2 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putShort((short) (Float.floatToRawIntBits(x) >>> 16));
        }
        return b.array();
    }

    /** Block grid values: 100 * (tensor index) + row * 10 + col, so each cell says where it came from. */
    static List<T> blockCheckpoint(String scaleDtype) {
        String p = "model.layers.0.";
        String[][] linears = {
            {"self_attn.q_proj", "256", "256"},
            {"self_attn.k_proj", "128", "256"},
            {"self_attn.v_proj", "128", "256"},
            {"self_attn.o_proj", "256", "256"},
            {"mlp.gate_proj", "512", "256"},
            {"mlp.up_proj", "512", "256"},
            {"mlp.down_proj", "256", "512"}
        };
        List<T> t = new ArrayList<>();
        t.add(T.of("model.embed_tokens.weight", "BF16", 64, 256));
        t.add(T.of(p + "input_layernorm.weight", "BF16", 256));
        t.add(T.of(p + "post_attention_layernorm.weight", "BF16", 256));
        for (int i = 0; i < linears.length; i++) {
            int rows = Integer.parseInt(linears[i][1]);
            int cols = Integer.parseInt(linears[i][2]);
            t.add(T.of(p + linears[i][0] + ".weight", "F8_E4M3", rows, cols));
            int gr = (rows + 127) / 128;
            int gc = (cols + 127) / 128;
            float[] g = new float[gr * gc];
            for (int r = 0; r < gr; r++) {
                for (int c = 0; c < gc; c++) {
                    g[r * gc + c] = 100 * (i + 1) + 10 * r + c;
                }
            }
            byte[] data = scaleDtype.equals("F32") ? f32(g) : bf16(g);
            t.add(new T(p + linears[i][0] + ".weight_scale_inv", scaleDtype, new long[] {gr, gc}, data));
        }
        t.add(T.of("model.norm.weight", "BF16", 256));
        t.add(T.of("lm_head.weight", "BF16", 64, 256));
        return t;
    }

    @Test
    void blockCheckpointValidatesAndItsGridsAssemble(@TempDir Path dir) {
        ModelConfig c = TestConfigs.quantized(SMALL, BLOCK);
        try (Checkpoint ck = ShardPlanTest.checkpoint(dir, blockCheckpoint("F32"))) {
            ShardPlan.validate(ck, c);
            List<DeviceTensor> r1 = ShardPlan.forRank(TpLayout.of(c, 2), 1);
            // gate rows 256..511 (grid rows 2, 3) then up's; 2 grid columns each
            assertThat(ScaleGrid.build(ck, find(r1, "layers.0.gate_up")))
                    .containsExactly(520, 521, 530, 531, 620, 621, 630, 631);
            // down: columns 256..511 of its [2, 4] grid
            assertThat(ScaleGrid.build(ck, find(r1, "layers.0.down"))).containsExactly(702, 703, 712, 713);
            // qkv: q head 1 (grid row 1), then the replicated kv head (one grid row each)
            assertThat(ScaleGrid.build(ck, find(r1, "layers.0.qkv"))).containsExactly(110, 111, 200, 201, 300, 301);
            // rows [64, 192) of gate alone: off the blocks, so one grid row per weight row (64 of block row 0, then 64
            // of block row 1)
            DeviceTensor off = Fp8Shards.linear(
                    TpLayout.of(c, 1),
                    0,
                    "off",
                    128,
                    256,
                    List.of(new Piece("model.layers.0.mlp.gate_proj.weight", 64, 0, 128, 256, 0)),
                    ShardPlan.expectedShapes(c));
            assertThat(off.type()).isEqualTo(WeightType.FP8_BLOCK_ROWS);
            float[] g = ScaleGrid.build(ck, off);
            assertThat(g).hasSize(256);
            assertThat(Arrays.copyOfRange(g, 0, 2)).containsExactly(500, 501);
            assertThat(Arrays.copyOfRange(g, 126, 128)).containsExactly(500, 501); // row 63
            assertThat(Arrays.copyOfRange(g, 128, 130)).containsExactly(510, 511); // row 64: block row 1
            assertThat(Arrays.copyOfRange(g, 254, 256)).containsExactly(510, 511);
        }
    }

    @Test
    void channelAndTensorGrids(@TempDir Path dir) {
        List<T> t = new ArrayList<>();
        float[] rows = new float[512];
        for (int i = 0; i < rows.length; i++) {
            rows[i] = 1 + (i % 128) / 128f; // exact in bf16
        }
        t.add(new T("model.layers.0.mlp.gate_proj.weight_scale", "BF16", new long[] {512, 1}, bf16(rows)));
        t.add(new T("model.layers.0.mlp.up_proj.weight_scale", "F32", new long[] {512}, f32(rows)));
        t.add(new T("model.layers.0.self_attn.o_proj.weight_scale", "F32", new long[] {1}, f32(0.25f)));
        t.add(new T("model.layers.0.self_attn.q_proj.weight_scale", "F32", new long[] {1}, f32(-1f)));
        try (Checkpoint ck = ShardPlanTest.checkpoint(dir, t)) {
            DeviceTensor gu = find(
                    ShardPlan.forRank(TpLayout.of(TestConfigs.quantized(SMALL, CHANNEL), 2), 1), "layers.0.gate_up");
            float[] g = ScaleGrid.build(ck, gu);
            assertThat(g).hasSize(512);
            assertThat(g[1]).isEqualTo(1 + 1 / 128f); // gate row 257
            assertThat(g[255]).isEqualTo(1 + 127 / 128f); // gate row 511
            assertThat(g[257]).isEqualTo(1 + 1 / 128f); // up row 257
            List<DeviceTensor> tensor = ShardPlan.forRank(TpLayout.of(TestConfigs.quantized(SMALL, TENSOR), 1), 0);
            assertThat(ScaleGrid.build(ck, find(tensor, "layers.0.o")))
                    .hasSize(256)
                    .containsOnly(0.25f);
            assertThatThrownBy(() -> ScaleGrid.build(ck, find(tensor, "layers.0.qkv")))
                    .hasMessageContaining("scale tensor model.layers.0.self_attn.q_proj.weight_scale holds -1.0");
        }
    }

    @Test
    void validateNamesWhatAQuantizedCheckpointLacks(@TempDir Path dir) {
        ModelConfig c = TestConfigs.quantized(SMALL, BLOCK);
        String q = "model.layers.0.self_attn.q_proj.";
        List<T> t = ShardPlanTest.replace(blockCheckpoint("BF16"), q + "weight_scale_inv", null);
        t = ShardPlanTest.replace(
                t,
                "model.layers.0.mlp.down_proj.weight_scale_inv",
                T.of("model.layers.0.mlp.down_proj.weight_scale_inv", "F32", 4, 2));
        t = ShardPlanTest.replace(
                t,
                "model.layers.0.mlp.up_proj.weight_scale_inv",
                T.of("model.layers.0.mlp.up_proj.weight_scale_inv", "I32", 4, 2));
        t = ShardPlanTest.replace(
                t,
                "model.layers.0.mlp.gate_proj.weight",
                T.of("model.layers.0.mlp.gate_proj.weight", "F8_E5M2", 512, 256));
        t = ShardPlanTest.replace(t, "lm_head.weight", T.of("lm_head.weight", "F8_E4M3", 64, 256));
        try (Checkpoint ck = ShardPlanTest.checkpoint(dir, t)) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, c))
                    .isInstanceOf(ModelException.class)
                    .hasMessageContaining("missing scale tensor " + q + "weight_scale_inv, expected shape [2, 2] F32")
                    .hasMessageContaining("scale tensor model.layers.0.mlp.down_proj.weight_scale_inv has shape "
                            + "[4, 2], expected [2, 4]")
                    .hasMessageContaining("up_proj.weight_scale_inv has dtype I32, expected F32, BF16 or F16")
                    .hasMessageContaining("gate_proj.weight has dtype F8_E5M2, expected F8_E4M3")
                    .hasMessageContaining("tensor lm_head.weight has dtype F8_E4M3, expected BF16");
        }
        // the same checkpoint read as unquantized: every linear is the wrong dtype
        try (Checkpoint ck = ShardPlanTest.checkpoint(dir, blockCheckpoint("F32"))) {
            assertThatThrownBy(() -> ShardPlan.validate(ck, SMALL))
                    .hasMessageContaining(q + "weight has dtype F8_E4M3, expected BF16 (config dtype bfloat16)");
        }
    }

    private static DeviceTensor find(List<DeviceTensor> plan, String key) {
        return plan.stream().filter(t -> t.key().equals(key)).findFirst().orElseThrow();
    }
}
