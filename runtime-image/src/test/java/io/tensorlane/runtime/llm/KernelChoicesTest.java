package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** TENSORLANE_GEMV and TENSORLANE_FUSED_NORM together, and the benchmark's baseline choices. */
class KernelChoicesTest {
    @ParameterizedTest(name = "TENSORLANE_FUSED_NORM=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", "ON; true", " off ; false", "Off; false", "; true", "  ; true"})
    void fusedNormIsOnUnlessSwitchedOff(String value, boolean fused) {
        KernelChoices c = KernelChoices.parse(null, value);
        assertThat(c.fusedNorm()).isEqualTo(fused);
        assertThat(c.tiledPrefill()).isTrue();
        assertThat(c.gemv()).isEqualTo(GemvPolicy.DEFAULT);
    }

    @ParameterizedTest(name = "TENSORLANE_FUSED_NORM=''{0}'' is refused")
    @ValueSource(strings = {"yes", "1", "true", "of"})
    void otherValuesAreRefusedWithTheChoices(String value) {
        assertThatThrownBy(() -> KernelChoices.parse(null, value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.FUSED_NORM_ENV + "='" + value + "'")
                .hasMessageContaining("expected on or off");
    }

    @Test
    void gemvComesFromItsOwnVariable() {
        assertThat(KernelChoices.parse("o,down", "off").gemv()).hasToString("o,down");
        assertThatThrownBy(() -> KernelChoices.parse("lm_head", null)).hasMessageContaining(GemvPolicy.ENV);
    }

    @Test
    void theBaselineIsTheEarlierKernelsEverywhere() {
        assertThat(KernelChoices.BASELINE.tiledPrefill()).isFalse();
        assertThat(KernelChoices.BASELINE.gemv()).isEqualTo(GemvPolicy.OFF);
        assertThat(KernelChoices.BASELINE.fusedNorm()).isFalse();
    }
}
