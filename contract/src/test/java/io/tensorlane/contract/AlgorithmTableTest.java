package io.tensorlane.contract;

import static io.tensorlane.contract.Algorithm.OneStage;
import static io.tensorlane.contract.Algorithm.Ring;
import static io.tensorlane.contract.Algorithm.TwoStage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.AlgorithmTable.Range;
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
  static final AlgorithmTable TABLE = new AlgorithmTable(8, "test", List.of(
      new Range(65536, 1 << 20, TwoStage), new Range(1, 65536, OneStage), new Range(1 << 20, 8 << 20, Ring)));

  static Stream<Arguments> selections() {
    return Stream.of(Arguments.of(1L, OneStage), Arguments.of(65535L, OneStage), Arguments.of(65536L, TwoStage),
        Arguments.of((1L << 20) - 1, TwoStage), Arguments.of(1L << 20, Ring), Arguments.of((8L << 20) - 1, Ring));
  }

  @ParameterizedTest
  @MethodSource("selections")
  void selects(long bytes, Algorithm expected) {
    assertThat(TABLE.select(bytes)).isEqualTo(expected);
  }

  @Test
  void sortsRangesAndRejectsOutside() {
    assertThat(TABLE.ranges()).extracting(Range::minBytes).containsExactly(1L, 65536L, 1L << 20);
    assertThat(TABLE.covers(8L << 20)).isFalse();
    assertThatThrownBy(() -> TABLE.select(8L << 20)).hasMessageContaining("beyond the algorithm table");
    assertThatThrownBy(() -> TABLE.select(0)).hasMessageContaining(">= 1 byte");
  }

  static Stream<Arguments> invalidTables() {
    return Stream.of(
        Arguments.of(8, List.of(), "at least one range"),
        Arguments.of(8, List.of(new Range(2, 10, OneStage)), "must start at 1 byte"),
        Arguments.of(8, List.of(new Range(1, 10, OneStage), new Range(11, 20, Ring)), "contiguous"),
        Arguments.of(8, List.of(new Range(1, 10, OneStage), new Range(5, 20, Ring)), "contiguous"),
        Arguments.of(9, List.of(new Range(1, 10, OneStage)), "worldSize must be 1..8"));
  }

  @ParameterizedTest
  @MethodSource("invalidTables")
  void rejectsInvalid(int ws, List<Range> ranges, String message) {
    assertThatThrownBy(() -> new AlgorithmTable(ws, "x", ranges)).isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  @Test
  void rangeValidation() {
    assertThatThrownBy(() -> new Range(10, 10, OneStage)).hasMessageContaining("minBytes < maxBytes");
    assertThatThrownBy(() -> new Range(1, 10, null)).hasMessageContaining("algorithm is missing");
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
    assertThatThrownBy(() -> AlgorithmTable.fromJson("{\"worldSize\":4,\"ranges\":[{\"minBytes\":3,\"maxBytes\":9,\"algorithm\":\"Ring\"}]}"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must start at 1 byte");
    assertThatThrownBy(() -> AlgorithmTable.fromJson("{\"worldSize\":4,\"ranges\":[{\"minBytes\":1,\"maxBytes\":9,\"algorithm\":\"Fast\"}]}"))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("invalid algorithm table JSON");
  }

  static Stream<Arguments> defaultTables() {
    return Stream.of(Arguments.of(2, 8L << 20, 4L << 20, OneStage), Arguments.of(8, 8L << 20, 4096L, OneStage),
        Arguments.of(8, 8L << 20, 8L << 20, TwoStage), Arguments.of(4, 100_000L, 100_000L, OneStage));
  }

  @ParameterizedTest
  @MethodSource("defaultTables")
  void defaults(int ws, long max, long bytes, Algorithm expected) {
    AlgorithmTable t = AlgorithmTable.defaults(ws, max);
    assertThat(t.select(bytes)).isEqualTo(expected);
    assertThat(t.maxBytes()).isEqualTo(max + 1);
  }

  @Test
  void fromMeasuredPointsMergesNeighbours() {
    AlgorithmTable t = AlgorithmTable.fromMeasuredPoints(8, "bench", new long[] {1024, 4096, 65536, 1 << 20},
        new Algorithm[] {OneStage, OneStage, TwoStage, TwoStage}, 64L << 20);
    assertThat(t.ranges()).hasSize(2);
    assertThat(t.select(4096)).isEqualTo(OneStage);
    assertThat(t.select(16383)).isEqualTo(OneStage); // geometric midpoint of 4096 and 65536 is 16384
    assertThat(t.select(16384)).isEqualTo(TwoStage);
    assertThat(t.maxBytes()).isEqualTo(64L << 20);
  }

  @Test
  void algorithmNamesMatchTheApi() {
    assertThat(Algorithm.parse("onestage")).isEqualTo(OneStage);
    assertThatThrownBy(() -> Algorithm.parse("Auto")).hasMessageContaining("expected one of");
    assertThat(Algorithm.NCCL.isCustom()).isFalse();
  }
}
