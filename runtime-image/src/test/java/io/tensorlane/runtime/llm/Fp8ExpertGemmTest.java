package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;
import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class Fp8ExpertGemmTest {
    /** The tiles of the given rows per expert, each as {expert, first row, end row}. */
    private static int[][] tilesOf(int... counts) {
        int experts = counts.length;
        int[] offsets = new int[experts + 1];
        for (int e = 0; e < experts; e++) {
            offsets[e + 1] = offsets[e] + counts[e];
        }
        int[] table = new int[4 * Fp8ExpertGemm.tileCapacity(offsets[experts], experts)];
        Arrays.fill(table, -7);
        int n = Fp8ExpertGemm.tiles(offsets, experts, table);
        int[][] tiles = new int[n][];
        for (int i = 0; i < n; i++) {
            assertThat(table[4 * i + 3]).isZero();
            tiles[i] = new int[] {table[4 * i], table[4 * i + 1], table[4 * i + 2]};
        }
        assertThat(table.length).isGreaterThanOrEqualTo(4 * n);
        return tiles;
    }

    @Test
    void eachExpertsRowsAreCutIntoTilesOf64InOrderAndEmptyExpertsHaveNone() {
        assertThat(tilesOf(0, 1, 64, 65, 0, 130)).isDeepEqualTo(new int[][] {
            new int[] {1, 0, 1},
            new int[] {2, 1, 65},
            new int[] {3, 65, 130},
            new int[] {3, 129, 130},
            new int[] {5, 130, 260},
            new int[] {5, 194, 260},
            new int[] {5, 258, 260}
        });
        assertThat(tilesOf(0, 0, 0)).isEmpty();
    }

    @Test
    void theCapacityHoldsTheWorstSplit() {
        // every expert one row past a whole tile: ceil(rows / 64) + experts - 1 tiles at most
        int[] counts = new int[16];
        Arrays.fill(counts, 65);
        assertThat(tilesOf(counts).length).isEqualTo(32);
        assertThat(Fp8ExpertGemm.tileCapacity(16 * 65, 16)).isGreaterThanOrEqualTo(32);
        assertThat(Fp8ExpertGemm.tileCapacity(0, 4)).isEqualTo(4);
    }

    @Test
    void theTableIsUploadedOnlyWhenItsTilesChange() {
        // a rank's layers share one device table: gate/up and down of a layer take the same offsets, the next layer
        // others
        Fp8ExpertGemm.Tiles tiles = new Fp8ExpertGemm.Tiles(new CUdeviceptr(), 8);
        int[] layer0 = {0, 3, 3, 70, 70};
        int[] layer1 = {0, 0, 70, 70, 70};
        assertThat(tiles.stage(layer0, 4)).as("first use").isTrue();
        assertThat(tiles.stage(layer0.clone(), 4)).as("the same layer's down").isFalse();
        assertThat(tiles.stage(layer1, 4)).as("the next layer").isTrue();
        assertThat(tiles.stage(layer1, 4)).isFalse();
        assertThat(tiles.stage(layer0, 4)).as("back to the first offsets").isTrue();
        // the same tile count, other rows: still a change
        assertThat(tiles.stage(new int[] {0, 3, 3, 71, 71}, 4)).isTrue();
        assertThat(tiles.stage(new int[] {0, 0, 0, 0, 0}, 4)).as("no rows").isTrue();
        assertThat(tiles.stage(new int[] {0, 0, 0, 0, 0}, 4)).isFalse();
    }

    @ParameterizedTest
    @CsvSource({"2048,768,true", "384,2048,true", "128,128,true", "448,256,false", "2048,702,false", "0,128,false"})
    void theGemmTakesProjectionsOfWhole128Blocks(int in, int out, boolean fits) {
        assertThat(MoeKernels.groupedFp8Fits(in, out)).isEqualTo(fits);
    }

    @Test
    void theLaunchShapeAndSharedBytesAreTheKernels() throws IOException {
        KernelSource cuh = KernelSource.read("tl_moe_gemm_fp8.cuh");
        int bm = cuh.constant("kBM"), bn = cuh.constant("kBN"), bk = cuh.constant("kBK");
        assertThat(bm).isEqualTo(MoeKernels.GEMM_FP8_ROWS);
        assertThat(bn).isEqualTo(MoeKernels.GEMM_FP8_COLS);
        assertThat(bk).isEqualTo(MoeKernels.GEMM_FP8_COLS);
        assertThat(cuh.constant("kThreads")).isEqualTo(MoeKernels.GEMM_FP8_THREADS);
        int stage = bm * bk + bn * bk + 4 * bm + 4 * bn; // A, B, the rows' and the columns' fp32 scales
        assertThat(cuh.constant("kStages") * stage).isEqualTo(MoeKernels.GEMM_FP8_SHARED_BYTES);
        assertThat(MoeKernels.GEMM_FP8_SHARED_BYTES).isLessThanOrEqualTo(99 * 1024); // sm_89's most for one block
    }
}
