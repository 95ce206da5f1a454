package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.sched.StepBatch;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChainedStepsTest {
    private static StepBatch chunk(int tokens, StepBatch.Logits logits) {
        int[] ids = new int[tokens];
        return new StepBatch.Builder(16, 8).add(List.of(3, 4), ids, 5, logits).build();
    }

    @ParameterizedTest(name = "{0} tokens, logits {1}, {2} more, {3} rows back -> {4}")
    @CsvSource({
        "1, ALL, 3, 5, true",
        "2, ALL, 3, 5, true",
        "3, LAST, 4, 5, true",
        "1, ALL, 0, 1, true",
        "1, ALL, 4, 4, false", // 5 ids do not fit 4 rows of the chain's buffer
        "2, NONE, 3, 5, false", // no logits: no id to chain from
        "1, ALL, -1, 5, false",
    })
    void aChainFitsOneGreedySequenceWithRoomForItsIds(
            int tokens, StepBatch.Logits logits, int more, int rows, boolean fits) {
        assertThat(ChainedSteps.fits(chunk(tokens, logits), more, rows)).isEqualTo(fits);
    }

    @Test
    void twoSequencesAreNotChained() {
        StepBatch two = new StepBatch.Builder(16, 8)
                .add(List.of(3), new int[] {1}, 5, StepBatch.Logits.ALL)
                .add(List.of(4), new int[] {2}, 7, StepBatch.Logits.ALL)
                .build();
        assertThat(ChainedSteps.fits(two, 2, 8)).isFalse();
    }
}
