package io.tensorlane.runtime.cli;

import static io.tensorlane.contract.Algorithm.OneStage;
import static io.tensorlane.contract.Algorithm.Ring;
import static io.tensorlane.contract.Algorithm.TwoStage;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.runtime.cli.BenchReport.Row;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class BenchReportTest {
    static Row row(String algo, String mode, long bytes, double us) {
        return new Row(algo, mode, 8, "bf16", bytes, us, us, us, 0, 0, 0, 15);
    }

    static Stream<Arguments> traffic() {
        long s = 64L << 20;
        return Stream.of(
                Arguments.of(OneStage, 8, s, 9.0 * s),
                Arguments.of(TwoStage, 8, s, 3.125 * s),
                Arguments.of(Ring, 8, s, 5.5 * s),
                Arguments.of(OneStage, 2, s, 3.0 * s),
                Arguments.of(Ring, 2, s, 4.0 * s));
    }

    @ParameterizedTest
    @MethodSource("traffic")
    void kernelTrafficPerRank(Algorithm a, int world, long bytes, double expected) {
        assertThat(Traffic.kernelBytesPerRank(a, world, bytes)).isCloseTo(expected, within(1.0));
    }

    @Test
    void bandwidthConventions() {
        assertThat(Traffic.algBw(1_000_000, 10)).isCloseTo(100.0, within(1e-9));
        assertThat(Traffic.busBw(1_000_000, 10, 8)).isCloseTo(175.0, within(1e-9));
        assertThat(Traffic.kernelGBs(OneStage, 2, 1_000_000, 10)).isCloseTo(600.0, within(1e-9));
        assertThat(Traffic.median(new double[] {5, 1, 3})).isEqualTo(3);
        assertThat(Traffic.median(new double[] {4, 1, 3, 2})).isEqualTo(2.5);
        assertThatThrownBy(() -> Traffic.median(new double[0])).hasMessageContaining("no samples");
        assertThatThrownBy(() -> Traffic.kernelBytesPerRank(Algorithm.NCCL, 2, 1))
                .hasMessageContaining("not modelled");
    }

    @Test
    void tunesFromGraphTimesWhereMeasuredAndKeepsTheWinnerWithinHysteresis() {
        List<Row> rows = List.of(
                row("copy", "memcpyDtoD", 1 << 20, 1),
                row("OneStage", "eager", 8192, 70),
                row("OneStage", "graph", 8192, 9),
                row("TwoStage", "eager", 8192, 60),
                row("TwoStage", "graph", 8192, 17),
                row("OneStage", "graph", 1 << 20, 19),
                row("TwoStage", "graph", 1 << 20, 23),
                // within 3 % of each other: keep OneStage (hysteresis), no flip
                row("OneStage", "eager", 2 << 20, 67.0),
                row("TwoStage", "eager", 2 << 20, 66.0),
                row("OneStage", "eager", 4 << 20, 71),
                row("TwoStage", "eager", 4 << 20, 70.5),
                // clearly faster: switch
                row("OneStage", "eager", 64L << 20, 589),
                row("TwoStage", "eager", 64L << 20, 464),
                row("Ring", "eager", 64L << 20, 858));
        AlgorithmTable t = BenchReport.tune(rows, 8, 64L << 20, "test");
        assertThat(t.select(8192)).isEqualTo(OneStage);
        assertThat(t.select(4 << 20)).isEqualTo(OneStage);
        assertThat(t.select(64L << 20)).isEqualTo(TwoStage);
        assertThat(t.rows()).hasSize(2);
        assertThat(t.maxMessageBytes()).isEqualTo(64L << 20);
    }

    @Test
    void ncclWinsOnlyWithTheSameWorldSize() {
        List<Row> rows = List.of(
                row("OneStage", "eager", 4096, 20), new Row("NCCL", "eager", 1, "bf16", 4096, 5, 5, 5, 0, 0, 0, 15));
        assertThat(BenchReport.tune(rows, 8, 1 << 20, "t").select(4096)).isEqualTo(OneStage);
        List<Row> same = List.of(row("OneStage", "eager", 4096, 20), row("NCCL", "eager", 4096, 5));
        assertThat(BenchReport.tune(same, 8, 1 << 20, "t").select(4096)).isEqualTo(Algorithm.NCCL);
        assertThatThrownBy(() -> BenchReport.tune(List.of(), 8, 1 << 20, "t")).hasMessageContaining("no measurement");
    }

    @Test
    void csvAndSvg() {
        List<Row> rows = List.of(
                row("OneStage", "graph", 8192, 9.5),
                row("OneStage", "graph", 16384, 9.7),
                row("Ring", "eager", 8192, 70));
        String csv = BenchReport.csv(rows);
        assertThat(csv.lines()).hasSize(4);
        assertThat(csv.lines().skip(1).findFirst().orElseThrow()).startsWith("OneStage,graph,8,bf16,8192,9.500,");
        String svg = BenchReport.svg(rows, "t <H200>");
        assertThat(svg)
                .startsWith("<svg")
                .contains("t &lt;H200&gt;")
                .contains("OneStage graph (8 ranks)")
                .contains("stroke-dasharray");
        assertThat(svg.split("<polyline", -1)).hasSize(3);
    }

    @Test
    void benchSizes() {
        assertThat(BenchCommand.sizes(1024, 8192, List.of(16L))).containsExactly(16L, 1024L, 2048L, 4096L, 8192L);
        assertThat(BenchCommand.sizes(1024, 65536, List.of(43008L))).contains(43008L, 65536L);
        assertThatThrownBy(() -> BenchCommand.sizes(1024, 512, List.of())).hasMessageContaining("--min-bytes");
        assertThatThrownBy(() -> BenchCommand.sizes(1024, 4096, List.of(100L))).hasMessageContaining("multiple of 16");
    }
}
