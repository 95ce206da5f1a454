package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.tensorlane.runtime.text.SamplingParams;
import org.junit.jupiter.api.Test;

/** The host side of kernelcheck's sampling cases: the distribution a draw must follow and the chi-square bound. */
class KernelCheckSamplingTest {
    private static final float[] LOGITS = {2f, 0f, 1f, -1f, 0.5f};

    private static double[] kept(float t, float p, int k, float minP) {
        return KernelCheckSampling.keptDistribution(LOGITS, new SamplingParams(t, p, k, minP, 0));
    }

    @Test
    void temperatureAloneIsTheSoftmax() {
        double[] d = kept(1f, 1f, 0, 0f);
        double z = 0;
        for (float l : LOGITS) {
            z += Math.exp(l);
        }
        for (int i = 0; i < LOGITS.length; i++) {
            assertThat(d[i]).isCloseTo(Math.exp(LOGITS[i]) / z, within(1e-12));
        }
    }

    @Test
    void topKKeepsTheKLargest() {
        double[] d = kept(1f, 1f, 2, 0f);
        assertThat(d[0] + d[2]).isCloseTo(1, within(1e-12));
        assertThat(d[1]).isZero();
        assertThat(d[0] / d[2]).isCloseTo(Math.E, within(1e-9));
    }

    @Test
    void topPKeepsTheSmallestPrefixReachingP() {
        // softmax of [2, 1, 0.5, 0, -1]: 0.5630, 0.2071, 0.1256, 0.0762, 0.0280 -> cumulative 0.5630, 0.7701, 0.8957
        assertThat(nonZero(kept(1f, 0.7f, 0, 0f))).isEqualTo(2);
        assertThat(nonZero(kept(1f, 0.8f, 0, 0f))).isEqualTo(3);
        assertThat(nonZero(kept(1f, 0.5f, 0, 0f))).isEqualTo(1);
        // after top-k 2 the renormalized masses are 0.731, 0.269: p 0.7 keeps one
        assertThat(nonZero(kept(1f, 0.7f, 2, 0f))).isEqualTo(1);
    }

    @Test
    void minPDropsProbabilitiesBelowAShareOfTheLargest() {
        // p_i / p_max = e^(l_i - 2): 1, 0.135, 0.368, 0.050, 0.223
        assertThat(nonZero(kept(1f, 1f, 0, 0.2f))).isEqualTo(3);
        assertThat(nonZero(kept(1f, 1f, 0, 0.4f))).isEqualTo(1);
    }

    @Test
    void criticalValuesMatchTheTable() {
        // chi-square quantiles at 1 - 1e-4: df 10 -> 35.56, df 50 -> 95.97 (tables); Wilson-Hilferty within 1.5%, on
        // the safe side
        assertThat(KernelCheckSampling.chiSquareCritical(10))
                .isCloseTo(35.56, within(0.55))
                .isGreaterThan(35.56);
        assertThat(KernelCheckSampling.chiSquareCritical(50)).isCloseTo(95.97, within(1.4));
    }

    private static int nonZero(double[] d) {
        int n = 0;
        for (double x : d) {
            n += x > 0 ? 1 : 0;
        }
        return n;
    }
}
