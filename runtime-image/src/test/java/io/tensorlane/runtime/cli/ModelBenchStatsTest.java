package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ModelBenchStatsTest {
    @Test
    void oddCountMedianIsTheMiddleAndPercentilesInterpolateLikeNumpy() {
        // numpy.percentile([5, 1, 4, 2, 3], [10, 50, 90]) = [1.4, 3.0, 4.6]
        ModelBenchStats s = ModelBenchStats.of(new double[] {5, 1, 4, 2, 3});
        assertThat(s.n()).isEqualTo(5);
        assertThat(s.median()).isEqualTo(3.0);
        assertThat(s.p10()).isCloseTo(1.4, within(1e-12));
        assertThat(s.p90()).isCloseTo(4.6, within(1e-12));
        assertThat(s.min()).isEqualTo(1.0);
        assertThat(s.max()).isEqualTo(5.0);
        assertThat(s.mean()).isEqualTo(3.0);
    }

    @Test
    void evenCountMedianIsTheMeanOfTheMiddleTwo() {
        ModelBenchStats s = ModelBenchStats.of(new double[] {10, 2, 8, 4});
        assertThat(s.median()).isEqualTo(6.0);
        // numpy.percentile([2, 4, 8, 10], 90) = 9.4
        assertThat(s.p90()).isCloseTo(9.4, within(1e-12));
        assertThat(ModelBenchStats.percentile(new double[] {10, 2, 8, 4}, 0)).isEqualTo(2.0);
        assertThat(ModelBenchStats.percentile(new double[] {10, 2, 8, 4}, 100)).isEqualTo(10.0);
    }

    @Test
    void oneSampleIsEveryStatistic() {
        ModelBenchStats s = ModelBenchStats.of(new double[] {7.5});
        assertThat(s).isEqualTo(new ModelBenchStats(1, 7.5, 7.5, 7.5, 7.5, 7.5, 7.5));
    }

    @Test
    void inputIsNotReordered() {
        double[] x = {3, 1, 2};
        ModelBenchStats.of(x);
        assertThat(x).containsExactly(3, 1, 2);
    }

    @Test
    void badInputIsRejected() {
        assertThatThrownBy(() -> ModelBenchStats.of(new double[0])).hasMessageContaining("no samples");
        assertThatThrownBy(() -> ModelBenchStats.of(new double[] {1, Double.NaN}))
                .hasMessageContaining("not finite");
        assertThatThrownBy(() -> ModelBenchStats.percentile(new double[] {1}, 101))
                .hasMessageContaining("[0, 100]");
    }
}
