package io.tensorlane.runtime.text;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SamplingParamsTest {
    static Stream<Arguments> invalid() {
        return Stream.of(
                Arguments.of(-0.1f, 1f, 0, 0f, "temperature must be a finite number >= 0 (0 = greedy), got -0.1"),
                Arguments.of(Float.NaN, 1f, 0, 0f, "temperature must be a finite number >= 0 (0 = greedy), got NaN"),
                Arguments.of(Float.POSITIVE_INFINITY, 1f, 0, 0f, "temperature must be a finite number >= 0"),
                Arguments.of(1f, 0f, 0, 0f, "top_p must be in (0, 1] (1 = off), got 0.0"),
                Arguments.of(1f, 1.01f, 0, 0f, "top_p must be in (0, 1] (1 = off), got 1.01"),
                Arguments.of(1f, Float.NaN, 0, 0f, "top_p must be in (0, 1]"),
                Arguments.of(1f, 1f, -2, 0f, "top_k must be >= 0 (0 or -1 = off), got -2"),
                Arguments.of(1f, 1f, 0, -0.5f, "min_p must be in [0, 1] (0 = off), got -0.5"),
                Arguments.of(1f, 1f, 0, 1.5f, "min_p must be in [0, 1] (0 = off), got 1.5"));
    }

    @ParameterizedTest(name = "{4}")
    @MethodSource("invalid")
    void invalidValuesNameTheParameter(float t, float topP, int topK, float minP, String message) {
        assertThatThrownBy(() -> new SamplingParams(t, topP, topK, minP, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith(message);
    }

    @Test
    void validValues() {
        assertThat(SamplingParams.greedy().isGreedy()).isTrue();
        assertThat(new SamplingParams(0.7f, 1f, -1, 0f, 1).effectiveTopK()).isZero();
        assertThat(new SamplingParams(0.7f, 1f, 1, 1f, 1).isGreedy()).isTrue();
        assertThat(new SamplingParams(0.7f, 0.9f, 40, 0.05f, 1).isGreedy()).isFalse();
        assertThat(new SamplingParams(0.7f, 0.9f, 40, 0.05f, 1).withSeed(5).seed())
                .isEqualTo(5);
    }
}
