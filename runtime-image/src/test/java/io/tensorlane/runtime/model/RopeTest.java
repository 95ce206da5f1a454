package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class RopeTest {
    @Test
    void defaultInverseFrequencies() {
        // headDim 8, theta 10000: 10000^(-0/8), 10000^(-2/8), ... = 1, 0.1, 0.01, 0.001
        double[] inv = Rope.invFreq(TestConfigs.rope(8, 10000.0, null));
        assertThat(inv).hasSize(4);
        assertThat(inv[0]).isEqualTo(1.0);
        assertThat(inv[1]).isCloseTo(0.1, within(1e-15));
        assertThat(inv[2]).isCloseTo(0.01, within(1e-16));
        assertThat(inv[3]).isCloseTo(0.001, within(1e-17));
    }

    @Test
    void linearDividesEveryFrequency() {
        double[] inv = Rope.invFreq(TestConfigs.rope(8, 10000.0, RopeScaling.linear(4.0)));
        assertThat(inv).containsExactly(new double[] {0.25, 0.025, 0.0025, 0.00025}, within(1e-15));
    }

    @Test
    void llama3KeepsHighFrequenciesScalesLowOnesAndSmoothsBetween() {
        // original 1000, low 1, high 4: wavelengths below 1000/4 = 250 unchanged, above 1000/1 = 1000 divided by the
        // factor.
        // wavelengths 2pi/inv: 6.28, 62.8 (kept), 628.3 (between), 6283 (scaled)
        double[] inv = Rope.invFreq(TestConfigs.rope(8, 10000.0, RopeScaling.llama3(8.0, 1.0, 4.0, 1000)));
        assertThat(inv[0]).isEqualTo(1.0);
        assertThat(inv[1]).isCloseTo(0.1, within(1e-15));
        // smooth = (1000 / 628.3185 - 1) / (4 - 1) = (1.5915494309 - 1) / 3 = 0.1971831436
        // inv = (1 - smooth) * 0.01 / 8 + smooth * 0.01 = 0.01 * (0.1003521070 + 0.1971831436) = 0.0029753525065
        assertThat(inv[2]).isCloseTo(0.0029753525065, within(1e-12));
        assertThat(inv[3]).isCloseTo(0.001 / 8, within(1e-17));
    }

    @Test
    void llama31FrequenciesAtTheBoundaries() {
        ModelConfig c = ModelConfigTest.load("llama-3.1-8b-instruct.json");
        double[] inv = Rope.invFreq(c);
        assertThat(inv).hasSize(64);
        for (int i = 0; i < 64; i++) {
            double base = Math.pow(500000.0, -2.0 * i / 128);
            double wavelength = 2 * Math.PI / base;
            if (wavelength < 8192 / 4.0) {
                assertThat(inv[i]).as("high frequency %d", i).isEqualTo(base);
            } else if (wavelength > 8192 / 1.0) {
                assertThat(inv[i]).as("low frequency %d", i).isCloseTo(base / 8, within(base * 1e-14));
            } else {
                assertThat(inv[i]).as("medium frequency %d", i).isStrictlyBetween(base / 8, base);
            }
        }
        // i = 0: unchanged; i = 63: wavelength 2pi * 500000^(126/128) >> 8192, scaled
        assertThat(inv[0]).isEqualTo(1.0);
        assertThat(inv[63]).isCloseTo(Math.pow(500000.0, -126.0 / 128) / 8, within(1e-20));
    }

    @Test
    void cosSinTablesArePositionMajor() {
        ModelConfig c = TestConfigs.rope(8, 10000.0, null);
        float[][] t = Rope.cosSin(c, 5);
        assertThat(t).hasNumberOfRows(2);
        assertThat(t[0]).hasSize(20);
        assertThat(t[1]).hasSize(20);
        double[] inv = Rope.invFreq(c);
        for (int pos = 0; pos < 5; pos++) {
            for (int i = 0; i < 4; i++) {
                assertThat(t[0][pos * 4 + i]).isEqualTo((float) Math.cos(pos * inv[i]));
                assertThat(t[1][pos * 4 + i]).isEqualTo((float) Math.sin(pos * inv[i]));
            }
        }
        assertThat(t[0][3 * 4 + 1]).isCloseTo((float) Math.cos(0.3), within(1e-7f));
        assertThat(t[1][0]).isZero();
        assertThat(t[0][0]).isEqualTo(1f);
    }

    @Test
    void largePositionsAreComputedInDouble() {
        ModelConfig c = ModelConfigTest.load("llama-3.2-1b.json");
        float[][] t = Rope.cosSin(c, 100_000);
        assertThat(t[0][99_999 * 32]).isEqualTo((float) Math.cos(99_999.0));
        assertThat(t[1][99_999 * 32 + 1]).isEqualTo((float) Math.sin(99_999.0 * Rope.invFreq(c)[1]));
    }

    @Test
    void rejectsEmptyTable() {
        assertThatThrownBy(() -> Rope.cosSin(TestConfigs.rope(8, 10000.0, null), 0))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("maxPositions > 0");
    }
}
