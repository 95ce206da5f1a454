package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The packing of {@code bench-model}'s context prefill (decode and verify measurements alike). */
class ModelBenchPrefillTest {
    /** Steps separated by " | ", chunks as seq:from-to. */
    static String show(List<List<ModelBenchPrefill.Chunk>> steps) {
        return steps.stream()
                .map(s -> s.stream()
                        .map(c -> c.seq() + ":" + c.from() + "-" + c.to())
                        .collect(Collectors.joining(" ")))
                .collect(Collectors.joining(" | "));
    }

    @ParameterizedTest(name = "{0} seqs x {1} tokens, {2} tokens/step, {3} rows -> {4}")
    @CsvSource(
            delimiter = ';',
            value = {
                // whole sequences share a step while the token budget lasts
                "3; 4; 16; 8; 0:0-4 1:0-4 2:0-4",
                // a sequence is cut where the step is full and goes on in the next one
                "3; 5; 8; 8; 0:0-5 1:0-3 | 1:3-5 2:0-5",
                // a long context over several steps
                "1; 20; 8; 8; 0:0-8 | 0:8-16 | 0:16-20",
                "2; 10; 4; 8; 0:0-4 | 0:4-8 | 0:8-10 1:0-2 | 1:2-6 | 1:6-10",
                // the row limit closes a step before the token budget
                "5; 2; 100; 2; 0:0-2 1:0-2 | 2:0-2 3:0-2 | 4:0-2",
                // one row per step: a cut sequence still continues first
                "2; 3; 2; 1; 0:0-2 | 0:2-3 | 1:0-2 | 1:2-3",
                "0; 7; 4; 4; ''"
            })
    void packsSequencesInOrderWithinTheTokenAndRowBudgets(
            int seqs, int tokens, int maxBatchTokens, int maxRows, String want) {
        assertThat(show(ModelBenchPrefill.plan(seqs, tokens, maxBatchTokens, maxRows)))
                .isEqualTo(want);
    }

    @ParameterizedTest
    @CsvSource({"0, 8, 4", "5, 0, 4", "5, 8, 0"})
    void refusesEmptyBudgets(int tokens, int maxBatchTokens, int maxRows) {
        assertThatThrownBy(() -> ModelBenchPrefill.plan(2, tokens, maxBatchTokens, maxRows))
                .hasMessageContaining("each must be >= 1");
    }
}
