package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StopCheckTest {
    static final int EOS = 2;
    static final int STOP_ID = 7;

    static Stream<Arguments> cases() {
        // what, generated (of max 5), token, the listener wants more, ignore_eos, expected
        return Stream.of(
                Arguments.of("an ordinary token", 3, 11, true, false, null),
                Arguments.of("the listener stops", 3, 11, false, false, FinishReason.STOP),
                Arguments.of("the listener's stop wins over max_tokens", 5, 11, false, false, FinishReason.STOP),
                Arguments.of("max_tokens reached", 5, 11, true, false, FinishReason.LENGTH),
                Arguments.of("max_tokens wins over EOS", 5, EOS, true, false, FinishReason.LENGTH),
                Arguments.of("EOS", 3, EOS, true, false, FinishReason.STOP),
                Arguments.of("EOS with ignore_eos", 3, EOS, true, true, null),
                Arguments.of("a stop token id", 3, STOP_ID, true, false, FinishReason.STOP),
                Arguments.of("a stop token id also with ignore_eos", 3, STOP_ID, true, true, FinishReason.STOP));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void after(String what, int generated, int token, boolean more, boolean ignoreEos, FinishReason expected) {
        SeqRequest r = new SeqRequest("r", new int[] {1, 3}, 5, SamplingParams.greedy(), Set.of(STOP_ID), ignoreEos, 0);
        assertThat(StopCheck.after(r, generated, token, more, Set.of(EOS))).isEqualTo(expected);
    }
}
