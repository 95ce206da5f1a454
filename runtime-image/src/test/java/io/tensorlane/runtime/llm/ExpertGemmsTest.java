package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.WeightType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where expert e's slice of a stacked FP8 weight's scales starts, per scale layout (what the dequantization reads). */
class ExpertGemmsTest {
    @Test
    void scaleOffsetOfEachLayout() {
        record Row(WeightType type, int e, int out, int in, long floats) {}
        List<Row> rows = List.of(
                // Qwen3-30B-A3B-FP8 at TP 2: gate/up [2 x 384, 2048], 16 block columns, compact grid
                new Row(WeightType.FP8_BLOCK, 5, 768, 2048, 5L * 768 / 128 * 16),
                // down [2048, 384]: 3 block columns
                new Row(WeightType.FP8_BLOCK, 7, 2048, 384, 7L * 16 * 3),
                // a grid row per weight row (a rank's 192 rows): e * out rows of ceil(in / 128)
                new Row(WeightType.FP8_BLOCK_ROWS, 3, 384, 2048, 3L * 384 * 16),
                new Row(WeightType.FP8_BLOCK_ROWS, 2, 100, 200, 2L * 100 * 2),
                // per-row scales: one a row
                new Row(WeightType.FP8_ROW, 4, 96, 512, 4L * 96),
                new Row(WeightType.FP8_BLOCK, 0, 100, 200, 0));
        for (Row r : rows) {
            assertThat(ExpertGemms.scaleOffset(r.type(), r.e(), r.out(), r.in()))
                    .as(r.toString())
                    .isEqualTo(r.floats());
        }
        assertThatThrownBy(() -> ExpertGemms.scaleOffset(WeightType.FP8_BLOCK, 1, 192, 2048))
                .hasMessageContaining("expert 1 starts at stacked row 192, inside a 128-row block");
    }
}
