package io.tensorlane.contract;

import static io.tensorlane.contract.Algorithm.OneStage;
import static io.tensorlane.contract.Algorithm.Ring;
import static io.tensorlane.contract.Algorithm.TwoStage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.AlgorithmTable.Row;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class AlgorithmTableTest {
    static final AlgorithmTable TABLE = new AlgorithmTable(
            8,
            "test",
            List.of(new Row((1 << 20) - 1, TwoStage), new Row(65535, OneStage), new Row((8 << 20) - 1, Ring)));

    static Stream<Arguments> selections() {
        return Stream.of(
                Arguments.of(1L, OneStage),
                Arguments.of(65535L, OneStage),
                Arguments.of(65536L, TwoStage),
                Arguments.of((1L << 20) - 1, TwoStage),
                Arguments.of(1L << 20, Ring),
                Arguments.of((8L << 20) - 1, Ring));
    }

    @ParameterizedTest
    @MethodSource("selections")
    void selects(long bytes, Algorithm expected) {
        assertThat(TABLE.select(bytes)).isEqualTo(expected);
    }

    @Test
    void sortsRowsAndRejectsOutside() {
        assertThat(TABLE.rows()).extracting(Row::upToBytes).containsExactly(65535L, (1L << 20) - 1, (8L << 20) - 1);
        assertThat(TABLE.covers(8L << 20)).isFalse();
        assertThatThrownBy(() -> TABLE.select(8L << 20)).hasMessageContaining("beyond the algorithm table");
        assertThatThrownBy(() -> TABLE.select(0)).hasMessageContaining(">= 1 byte");
    }

    static Stream<Arguments> invalidTables() {
        return Stream.of(
                Arguments.of(8, List.of(), "at least one row"),
                Arguments.of(8, List.of(new Row(10, OneStage), new Row(10, Ring)), "two rows end at 10 bytes"),
                Arguments.of(0, List.of(new Row(10, OneStage)), "worldSize must be 1..8"),
                Arguments.of(9, List.of(new Row(10, OneStage)), "worldSize must be 1..8"));
    }

    @ParameterizedTest
    @MethodSource("invalidTables")
    void rejectsInvalid(int ws, List<Row> rows, String message) {
        assertThatThrownBy(() -> new AlgorithmTable(ws, "x", rows))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void rowValidation() {
        assertThatThrownBy(() -> new Row(0, OneStage)).hasMessageContaining("upToBytes must be >= 1");
        assertThatThrownBy(() -> new Row(10, null)).hasMessageContaining("algorithm is missing");
    }

    @Test
    void jsonRoundTrip(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("t.json");
        TABLE.save(f);
        assertThat(Files.readString(f)).contains("\"algorithm\" : \"TwoStage\"");
        assertThat(AlgorithmTable.load(f)).isEqualTo(TABLE);
    }

    @Test
    void badJsonGivesClearMessage() {
        assertThatThrownBy(() -> AlgorithmTable.fromJson(
                        "{\"worldSize\":4,\"rows\":[{\"upToBytes\":0,\"algorithm\":\"Ring\"}]}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("upToBytes must be >= 1");
        assertThatThrownBy(() -> AlgorithmTable.fromJson(
                        "{\"worldSize\":4,\"rows\":[{\"upToBytes\":9,\"algorithm\":\"Fast\"}]}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("invalid algorithm table JSON");
        assertThatThrownBy(() -> AlgorithmTable.fromJson("{\"worldSize\":4}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least one row");
    }

    static Stream<Arguments> defaultTables() {
        return Stream.of(
                Arguments.of(true, 2, 8L << 20, 8L << 20, OneStage),
                Arguments.of(false, 2, 8L << 20, 8L << 20, OneStage),
                Arguments.of(true, 8, 8L << 20, 4096L, OneStage),
                Arguments.of(true, 8, 8L << 20, 512L << 10, OneStage),
                Arguments.of(true, 8, 8L << 20, (512L << 10) + 1, TwoStage),
                Arguments.of(true, 8, 8L << 20, 8L << 20, TwoStage),
                Arguments.of(false, 8, 8L << 20, 64L << 10, OneStage),
                Arguments.of(false, 8, 8L << 20, (64L << 10) + 1, Ring),
                Arguments.of(false, 4, 8L << 20, 8L << 20, Ring),
                Arguments.of(true, 4, 100_000L, 100_000L, OneStage),
                Arguments.of(false, 4, 1000L, 1000L, OneStage));
    }

    @ParameterizedTest
    @MethodSource("defaultTables")
    void defaults(boolean nvlink, int ws, long max, long bytes, Algorithm expected) {
        AlgorithmTable t = AlgorithmTable.defaults(nvlink, ws, max);
        assertThat(t.select(bytes)).isEqualTo(expected);
        assertThat(t.maxMessageBytes()).isEqualTo(max);
        assertThat(t.covers(max + 1)).isFalse();
    }

    @Test
    void clipEndsTheTableAtTheMaximum() {
        assertThat(TABLE.clip(1000).rows()).containsExactly(new Row(1000, OneStage));
        assertThat(TABLE.clip(65535).rows()).containsExactly(new Row(65535, OneStage));
        assertThat(TABLE.clip(65536).rows()).containsExactly(new Row(65535, OneStage), new Row(65536, TwoStage));
        assertThat(TABLE.clip(16L << 20).rows())
                .containsExactly(new Row(65535, OneStage), new Row((1 << 20) - 1, TwoStage), new Row(16L << 20, Ring));
    }

    @Test
    void fromMeasuredPointsMergesNeighbours() {
        AlgorithmTable t = AlgorithmTable.fromMeasuredPoints(
                8,
                "bench",
                new long[] {1024, 4096, 65536, 1 << 20},
                new Algorithm[] {OneStage, OneStage, TwoStage, TwoStage},
                64L << 20);
        assertThat(t.rows()).hasSize(2);
        assertThat(t.select(4096)).isEqualTo(OneStage);
        assertThat(t.select(16383)).isEqualTo(OneStage); // geometric midpoint of 4096 and 65536 is 16384
        assertThat(t.select(16384)).isEqualTo(TwoStage);
        assertThat(t.maxMessageBytes()).isEqualTo(64L << 20);
    }

    @Test
    void algorithmNamesMatchTheApi() {
        assertThat(Algorithm.parse("onestage")).isEqualTo(OneStage);
        assertThatThrownBy(() -> Algorithm.parse("Auto")).hasMessageContaining("expected one of");
        assertThat(Algorithm.NCCL.isCustom()).isFalse();
    }
}
