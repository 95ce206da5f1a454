package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NgramProposerTest {
    static Stream<Arguments> cases() {
        return Stream.of(
                // tokens, n, k, expected guess
                Arguments.of(new int[] {1, 2, 3, 4, 1, 2}, 3, 4, new int[] {3, 4, 1, 2}),
                Arguments.of(new int[] {1, 2, 3, 4, 1, 2}, 3, 2, new int[] {3, 4}),
                // the longest suffix wins: "7 1 2" occurs before "9 1 2"'s "1 2"
                Arguments.of(new int[] {7, 1, 2, 5, 9, 1, 2, 6, 7, 1, 2}, 3, 3, new int[] {5, 9, 1}),
                // with n = 2 only "1 2" is matched, and its latest earlier occurrence is followed by 6
                Arguments.of(new int[] {7, 1, 2, 5, 9, 1, 2, 6, 7, 1, 2}, 2, 3, new int[] {6, 7, 1}),
                // falls back to a single token
                Arguments.of(new int[] {4, 8, 6, 3, 8}, 3, 2, new int[] {6, 3}),
                // the guess stops at the end of the sequence
                Arguments.of(new int[] {5, 6, 5}, 3, 4, new int[] {6, 5}),
                // a run of one token: the latest earlier occurrence of "3 3" is right before the end
                Arguments.of(new int[] {3, 3, 3, 3}, 2, 4, new int[] {3}),
                // nothing matches
                Arguments.of(new int[] {1, 2, 3, 4}, 3, 4, new int[] {}),
                Arguments.of(new int[] {1}, 3, 4, new int[] {}),
                Arguments.of(new int[] {1, 2, 1}, 3, 0, new int[] {}));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void proposesWhatFollowedTheLongestMatchedSuffix(int[] tokens, int n, int k, int[] want) {
        int[] seq = Arrays.copyOf(tokens, tokens.length + 10); // room past length is never read
        Arrays.fill(seq, tokens.length, seq.length, 99);
        int[] out = new int[Math.max(k, 1)];
        int got = new NgramProposer(n).open(seq.length).propose(seq, tokens.length, k, out);
        assertThat(Arrays.copyOf(out, got)).containsExactly(want);
        assertThat(Arrays.copyOf(seq, tokens.length)).containsExactly(tokens);
        int[] oracle = new int[out.length];
        assertThat(Arrays.copyOf(oracle, NgramScan.propose(seq, tokens.length, n, k, oracle)))
                .containsExactly(want);
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(ints = {0, -1, 17})
    void refusesAnNgramSizeOutOfRange(int n) {
        assertThatThrownBy(() -> new NgramProposer(n)).hasMessageContaining("n-gram size must be 1..16");
    }
}
