package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Where expert e's slice of a stacked FP8 weight finds its scales, per layout: what the long MoE steps' dequantization
 * of one expert reads ({@code ExpertGemms}).
 */
class WeightTypeScaleOffsetTest {
    @Test
    void scaleOffsetOfEachLayout() {
        record Row(WeightType type, long row, long cols, long floats) {}
        List<Row> rows = List.of(
                // Qwen3-30B-A3B-FP8 at TP 2, expert 5: gate/up [2 x 384, 2048], 16 block columns, compact grid
                new Row(WeightType.FP8_BLOCK, 5L * 768, 2048, 5L * 768 / 128 * 16),
                // expert 7's down [2048, 384]: 3 block columns (the last partial)
                new Row(WeightType.FP8_BLOCK, 7L * 2048, 384, 7L * 16 * 3),
                // a grid row per weight row (a rank's 192 rows): e * out rows of ceil(cols / 128)
                new Row(WeightType.FP8_BLOCK_ROWS, 3L * 384, 2048, 3L * 384 * 16),
                new Row(WeightType.FP8_BLOCK_ROWS, 2L * 100, 200, 2L * 100 * 2),
                // per-row scales: one a row
                new Row(WeightType.FP8_ROW, 4L * 96, 512, 4L * 96),
                new Row(WeightType.FP8_BLOCK, 0, 200, 0));
        for (Row r : rows) {
            assertThat(r.type().scaleOffset(r.row(), r.cols())).as(r.toString()).isEqualTo(r.floats());
        }
        assertThatThrownBy(() -> WeightType.FP8_BLOCK.scaleOffset(192, 2048))
                .hasMessageContaining("a slice from row 192 starts inside a 128-row scale block (FP8_BLOCK)");
    }

    /**
     * Expert e's slice of a stacked weight, dequantized alone from its scales at {@link WeightType#scaleOffset}, equals
     * the same rows of the whole stacked weight dequantized (what the decode kernels read by the stacked row and the
     * long steps' per-expert dequantization must agree on), for each layout.
     */
    @Test
    void anExpertsSliceDequantizesAsTheStackedRows() {
        SplittableRandom rnd = new SplittableRandom(7);
        int experts = 4;
        int out = 256;
        int in = 200; // a partial 128-column block
        byte[] w = new byte[experts * out * in];
        for (int i = 0; i < w.length; i++) {
            int v = rnd.nextInt(256);
            w[i] = (byte) ((v & 0x7f) == 0x7f ? v ^ 1 : v);
        }
        for (WeightType type : List.of(WeightType.FP8_BLOCK, WeightType.FP8_BLOCK_ROWS, WeightType.FP8_ROW)) {
            float[] s = new float[(int) type.scaleCount((long) experts * out, in)];
            for (int i = 0; i < s.length; i++) {
                s[i] = (float) (1 + rnd.nextDouble()) / 512;
            }
            double[] all = Fp8.dequantize(w, s, type, experts * out, in);
            for (int e = 0; e < experts; e++) {
                int from = (int) type.scaleOffset((long) e * out, in);
                float[] sliceScales = Arrays.copyOfRange(s, from, from + (int) type.scaleCount(out, in));
                byte[] slice = Arrays.copyOfRange(w, e * out * in, (e + 1) * out * in);
                assertThat(Fp8.dequantize(slice, sliceScales, type, out, in))
                        .as(type + " expert " + e)
                        .containsExactly(Arrays.copyOfRange(all, e * out * in, (e + 1) * out * in));
            }
        }
    }
}
