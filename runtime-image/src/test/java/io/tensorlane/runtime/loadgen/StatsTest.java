package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StatsTest {
    /** Expected values are numpy.percentile's (linear interpolation). */
    static Stream<Arguments> percentiles() {
        double[] four = {1, 2, 3, 4};
        double[] ten = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
        return Stream.of(
                Arguments.of(new double[] {7}, 50, 7.0),
                Arguments.of(new double[] {7}, 99, 7.0),
                Arguments.of(four, 0, 1.0),
                Arguments.of(four, 50, 2.5),
                Arguments.of(four, 90, 3.7),
                Arguments.of(four, 99, 3.97),
                Arguments.of(four, 100, 4.0),
                Arguments.of(ten, 50, 55.0),
                Arguments.of(ten, 90, 91.0),
                Arguments.of(ten, 99, 99.1),
                Arguments.of(ten, 25, 32.5));
    }

    @ParameterizedTest(name = "p{1} of {0} = {2}")
    @MethodSource("percentiles")
    void percentileLikeNumpy(double[] sorted, double p, double expected) {
        assertThat(Stats.percentile(sorted, p)).isCloseTo(expected, within(1e-9));
    }

    @Test
    void distSortsIgnoresNanAndHandlesEmpty() {
        Stats.Dist d = Stats.of(new double[] {4, Double.NaN, 1, 3, 2});
        assertThat(d.count()).isEqualTo(4);
        assertThat(d.mean()).isEqualTo(2.5);
        assertThat(d.median()).isEqualTo(2.5);
        assertThat(d.p90()).isCloseTo(3.7, within(1e-9));
        assertThat(d.p99()).isCloseTo(3.97, within(1e-9));
        assertThat(Stats.of(new double[0])).isEqualTo(Stats.Dist.EMPTY);
        assertThat(Stats.of(new double[] {Double.NaN}).mean()).isNaN();
        assertThat(Stats.percentile(new double[0], 50)).isNaN();
        assertThatThrownBy(() -> Stats.percentile(new double[] {1}, 101)).hasMessageContaining("[0, 100]");
    }
}
