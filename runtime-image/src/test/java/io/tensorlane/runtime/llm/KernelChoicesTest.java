package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** TENSORLANE_GEMV, TENSORLANE_FUSED_NORM and TENSORLANE_ALLREDUCE_PUSH together, and the benchmark's baseline choices. */
class KernelChoicesTest {
    @ParameterizedTest(name = "TENSORLANE_FUSED_NORM=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", "ON; true", " off ; false", "Off; false", "; true", "  ; true"})
    void fusedNormIsOnUnlessSwitchedOff(String value, boolean fused) {
        KernelChoices c = KernelChoices.parse(null, value, null);
        assertThat(c.fusedNorm()).isEqualTo(fused);
        assertThat(c.tiledPrefill()).isTrue();
        assertThat(c.gemv()).isEqualTo(GemvPolicy.DEFAULT);
        assertThat(c.push()).isFalse();
    }

    @ParameterizedTest(name = "TENSORLANE_ALLREDUCE_PUSH=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {"on; true", " ON ; true", "off; false", "; false", "  ; false"})
    void pushIsOffUnlessSwitchedOn(String value, boolean push) {
        KernelChoices c = KernelChoices.parse(null, null, value);
        assertThat(c.push()).isEqualTo(push);
        assertThat(c.fusedNorm()).isTrue();
    }

    @Test
    void aBadPushValueIsRefusedWithTheChoices() {
        assertThatThrownBy(() -> KernelChoices.parse(null, null, "push"))
                .hasMessageContaining(KernelChoices.PUSH_ENV + "='push'")
                .hasMessageContaining("expected on or off");
    }

    @ParameterizedTest(name = "TENSORLANE_FUSED_NORM=''{0}'' is refused")
    @ValueSource(strings = {"yes", "1", "true", "of"})
    void otherValuesAreRefusedWithTheChoices(String value) {
        assertThatThrownBy(() -> KernelChoices.parse(null, value, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(KernelChoices.FUSED_NORM_ENV + "='" + value + "'")
                .hasMessageContaining("expected on or off");
    }

    @Test
    void gemvComesFromItsOwnVariable() {
        assertThat(KernelChoices.parse("o,down", "off", null).gemv()).hasToString("o,down");
        assertThatThrownBy(() -> KernelChoices.parse("lm_head", null, null)).hasMessageContaining(GemvPolicy.ENV);
    }

    @Test
    void theBaselineIsTheEarlierKernelsEverywhere() {
        assertThat(KernelChoices.BASELINE.tiledPrefill()).isFalse();
        assertThat(KernelChoices.BASELINE.gemv()).isEqualTo(GemvPolicy.OFF);
        assertThat(KernelChoices.BASELINE.fusedNorm()).isFalse();
        assertThat(KernelChoices.BASELINE.push()).isFalse();
    }
}
