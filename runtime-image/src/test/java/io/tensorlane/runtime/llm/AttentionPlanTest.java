package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which tokens go to the tensor-core prefill kernel (tiles) and which to the split-key kernel (rest). */
class AttentionPlanTest {
    /** {start position, tokens} per sequence in batch order, the head dim, then the expected tiles and rest. */
    static Stream<Arguments> steps() {
        return Stream.of(
                Arguments.of("decode batch of 8", chunks(1, 1, 1, 1, 1, 1, 1, 1), 128, new int[] {}, new int[] {}),
                Arguments.of(
                        "one 200-token prompt",
                        new int[][] {{0, 200}},
                        128,
                        new int[] {0, 64, 64, 64, 128, 64, 192, 8},
                        new int[] {}),
                Arguments.of("exactly 64", new int[][] {{0, 64}}, 64, new int[] {0, 64}, new int[] {}),
                Arguments.of("16 tokens is one tile", new int[][] {{3, 16}}, 128, new int[] {0, 16}, new int[] {}),
                Arguments.of(
                        "15 tokens stay with the split kernel",
                        new int[][] {{3, 15}, {0, 1}},
                        128,
                        new int[] {},
                        new int[] {}),
                Arguments.of(
                        "mixed step",
                        new int[][] {{300, 1}, {0, 200}, {5, 10}, {130, 70}, {0, 1}},
                        128,
                        new int[] {1, 64, 65, 64, 129, 64, 193, 8, 211, 64, 275, 6},
                        new int[] {0, 201, 202, 203, 204, 205, 206, 207, 208, 209, 210, 281}),
                Arguments.of("head dim 96: no tiles", new int[][] {{0, 200}}, 96, new int[] {}, new int[] {}),
                Arguments.of("head dim 256: no tiles", new int[][] {{0, 200}}, 256, new int[] {}, new int[] {}),
                Arguments.of(
                        "two sequences back to back",
                        new int[][] {{0, 20}, {0, 20}},
                        128,
                        new int[] {0, 20, 20, 20},
                        new int[] {}));
    }

    private static int[][] chunks(int... lengths) {
        return Arrays.stream(lengths).mapToObj(l -> new int[] {0, l}).toArray(int[][]::new);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("steps")
    void plan(String name, int[][] chunks, int hd, int[] tiles, int[] rest) {
        List<Integer> seq = new ArrayList<>();
        List<Integer> pos = new ArrayList<>();
        for (int s = 0; s < chunks.length; s++) {
            for (int p = chunks[s][0]; p < chunks[s][0] + chunks[s][1]; p++) {
                seq.add(s);
                pos.add(p);
            }
        }
        int n = seq.size();
        AttentionPlan plan = AttentionPlan.of(
                seq.stream().mapToInt(i -> i).toArray(),
                pos.stream().mapToInt(i -> i).toArray(),
                n,
                hd);
        assertThat(plan.tiles()).as("tiles").containsExactly(tiles);
        assertThat(plan.rest()).as("rest").containsExactly(rest);
        if (tiles.length > 0) {
            // every token is served exactly once
            List<Integer> served = new ArrayList<>();
            for (int i = 0; i < plan.numTiles(); i++) {
                int t0 = plan.tiles()[2 * i];
                int rows = plan.tiles()[2 * i + 1];
                assertThat(rows).isBetween(1, AttentionPlan.TILE_ROWS);
                for (int r = 0; r < rows; r++) {
                    served.add(t0 + r);
                    assertThat(seq.get(t0 + r)).isEqualTo(seq.get(t0));
                    assertThat(pos.get(t0 + r)).isEqualTo(pos.get(t0) + r);
                }
            }
            Arrays.stream(plan.rest()).forEach(served::add);
            assertThat(served)
                    .containsExactlyInAnyOrderElementsOf(
                            IntStream.range(0, n).boxed().toList());
            assertThat(plan.numTiles()).isLessThanOrEqualTo(AttentionPlan.maxTiles(n));
        }
    }

    @ParameterizedTest(name = "a run of {0} tokens fits the tile buffer")
    @MethodSource("runLengths")
    void tileBufferBound(int len) {
        int[] seq = new int[len];
        int[] pos = IntStream.range(0, len).toArray();
        assertThat(AttentionPlan.of(seq, pos, len, 128).numTiles()).isLessThanOrEqualTo(AttentionPlan.maxTiles(len));
    }

    static IntStream runLengths() {
        return IntStream.of(16, 17, 31, 63, 64, 65, 127, 129, 2048, 8191);
    }
}
