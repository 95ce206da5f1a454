package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Scale grids in the layouts cuBLASLt reads: block rows padded with zeros to 4 scales, per-row scales per 128 columns. */
class ScaleGridPadTest {
    @Test
    void rowsOfFourOrMoreWholeFoursAreTheGridItself() {
        float[] g = {1, 2, 3, 4, 5, 6, 7, 8};
        assertThat(ScaleGrid.padRows(g, 4, 4)).isSameAs(g);
        assertThat(ScaleGrid.padRows(g, 8, 4)).isSameAs(g);
    }

    @Test
    void shortRowsArePaddedWithZerosAndKeepTheirOrder() {
        // 2 rows of 14 blocks (1792 columns: 8B's down_proj at TP 8) -> rows of 16
        float[] g = new float[28];
        for (int i = 0; i < g.length; i++) {
            g[i] = i + 1;
        }
        float[] p = ScaleGrid.padRows(g, 14, 4);
        assertThat(p).hasSize(32);
        for (int r = 0; r < 2; r++) {
            for (int c = 0; c < 16; c++) {
                assertThat(p[r * 16 + c]).as("row %d col %d", r, c).isEqualTo(c < 14 ? g[r * 14 + c] : 0f);
            }
        }
        assertThat(ScaleGrid.padRows(new float[] {7, 8, 9}, 1, 4)).containsExactly(7, 0, 0, 0, 8, 0, 0, 0, 9, 0, 0, 0);
        assertThat(ScaleGrid.padRows(new float[] {1, 2, 3, 4, 5, 6}, 3, 4)).containsExactly(1, 2, 3, 0, 4, 5, 6, 0);
    }

    @Test
    void perRowScalesRepeatedForEachColumnGroupRowContiguous() {
        // 3 rows, 448 columns = 4 groups of 128 (the last partial): [4, 3], element (g, r) at g * 3 + r
        assertThat(ScaleGrid.groups(448, 128)).isEqualTo(4);
        assertThat(ScaleGrid.groups(4096, 128)).isEqualTo(32);
        assertThat(ScaleGrid.groups(1, 128)).isEqualTo(1);
        assertThat(ScaleGrid.rowsPerGroup(new float[] {0.5f, 2f, 3f}, 4))
                .containsExactly(0.5f, 2f, 3f, 0.5f, 2f, 3f, 0.5f, 2f, 3f, 0.5f, 2f, 3f);
        assertThatThrownBy(() -> ScaleGrid.rowsPerGroup(new float[] {1}, 0)).hasMessageContaining("positive");
    }

    @Test
    void aGridThatIsNotWholeRowsIsRefused() {
        assertThatThrownBy(() -> ScaleGrid.padRows(new float[5], 2, 4))
                .hasMessageContaining("a grid of 5 scales in rows of 2");
        assertThatThrownBy(() -> ScaleGrid.padRows(new float[4], 0, 4)).isInstanceOf(IllegalArgumentException.class);
    }
}
