package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The routing dump as llm.RoutingDump writes it (n, layers, k; row, position, id per token; ids [layers][n][k]) read back,
 * and the count of (token, layer) pairs two computations routed differently: slots in another order are the same
 * experts, a sequence prefilled in two steps is looked up in both, a missing position counts as different.
 */
class RoutingRecordsTest {
    @TempDir
    Path dir;

    /** One step's record: tokens {row, position, id}, experts [layers][n][k]. */
    static byte[] record(int[][] tokens, int[][][] experts) {
        int n = tokens.length;
        int layers = experts.length;
        int k = experts[0][0].length;
        ByteBuffer b = ByteBuffer.allocate(4 * (3 + 3 * n + layers * n * k)).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(n).putInt(layers).putInt(k);
        for (int[] t : tokens) {
            b.putInt(t[0]).putInt(t[1]).putInt(t[2]);
        }
        for (int[][] layer : experts) {
            for (int[] e : layer) {
                for (int x : e) {
                    b.putInt(x);
                }
            }
        }
        return b.array();
    }

    Path dump(byte[]... records) throws IOException {
        Path f = dir.resolve("routing.bin");
        try (var out = Files.newOutputStream(f)) {
            for (byte[] r : records) {
                out.write(r);
            }
        }
        return f;
    }

    @Test
    void stepsReadBackAndDifferencesAreCountedPerTokenAndLayer() throws IOException {
        // a writer prefills positions 0-1 with another row beside it, then position 2; fresh computes 0-2 in one step
        byte[] w0 = record(new int[][] {{0, 0, 5}, {0, 1, 6}, {1, 0, 9}}, new int[][][] {
            {{1, 2}, {3, 4}, {7, 7}}, {{0, 5}, {2, 6}, {7, 7}}
        });
        byte[] w1 = record(new int[][] {{0, 2, 7}}, new int[][][] {{{4, 1}}, {{3, 0}}});
        byte[] fresh = record(new int[][] {{0, 0, 5}, {0, 1, 6}, {0, 2, 7}}, new int[][][] {
            {{2, 1}, {3, 4}, {1, 4}}, {{5, 0}, {2, 7}, {0, 3}}
        });
        List<RoutingRecords.Step> steps = RoutingRecords.read(dump(w0, w1, fresh));
        assertThat(steps).hasSize(3);
        assertThat(steps.get(0).n()).isEqualTo(3);
        assertThat(steps.get(0).experts(0, 1, 1)).containsExactly(2, 6);
        assertThat(steps.get(0).experts(1, 0, 0)).containsExactly(7, 7);
        assertThat(steps.get(0).experts(0, 5, 0)).isNull();
        List<RoutingRecords.At> writer =
                List.of(new RoutingRecords.At(steps.get(0), 0), new RoutingRecords.At(steps.get(1), 0));
        List<RoutingRecords.At> f = List.of(new RoutingRecords.At(steps.get(2), 0));
        // position 1 layer 1: {2, 6} vs {2, 7}; every other pair equal (slot order aside)
        assertThat(RoutingRecords.differing(writer, f, 0, 3)).isEqualTo(1);
        assertThat(RoutingRecords.differing(writer, f, 0, 1)).isZero();
        assertThat(RoutingRecords.differing(writer, f, 2, 3))
                .as("position 2 from the writer's second step")
                .isZero();
        assertThat(RoutingRecords.differing(writer, f, 3, 4))
                .as("a position neither has: 2 layers")
                .isEqualTo(2);
    }

    @Test
    void aCutDumpNamesTheFileAndTheCommandReportsWithoutGating() throws IOException {
        byte[] r = record(new int[][] {{0, 0, 5}}, new int[][][] {{{1, 2}}});
        Path f = dump(java.util.Arrays.copyOf(r, r.length - 4));
        assertThatThrownBy(() -> RoutingRecords.read(f))
                .hasMessageContaining(f.toString())
                .hasMessageContaining("step 0");
        StringWriter err = new StringWriter();
        assertThat(PrefixCheckCommand.routing(f.toString(), new java.io.PrintWriter(err, true)))
                .isNull();
        assertThat(err.toString()).contains("not readable").contains("reported, not gated");
        assertThat(PrefixCheckCommand.routing(null, new java.io.PrintWriter(err, true)))
                .isNull();
        assertThat(PrefixCheckCommand.routing(dump(r).toString(), new java.io.PrintWriter(err, true)))
                .hasSize(1);
    }
}
