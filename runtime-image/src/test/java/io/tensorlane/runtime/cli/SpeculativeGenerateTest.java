package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** generate's steady rate ({@link SpeculativeGenerate#steady}): the requests after the first one to finish. */
class SpeculativeGenerateTest {
    static SpeculativeGenerate.Collect finished(double seconds, int tokens) {
        SpeculativeGenerate.Collect c = new SpeculativeGenerate.Collect();
        c.finishNanos = (long) (seconds * 1e9);
        for (int i = 0; i < tokens; i++) {
            c.onToken(i, null);
        }
        return c;
    }

    @Test
    void theTokensAfterTheFirstFinishOverTheTimeAfterIt() {
        // finished at 1 s (its 100 tokens and warm-up left out), 3 s and 2 s: 300 + 200 tokens in 2 s
        assertThat(SpeculativeGenerate.steady(List.of(finished(3, 300), finished(1, 100), finished(2, 200))))
                .isEqualTo(250.0);
    }

    @Test
    void oneRequestHasNoSteadyRate() {
        assertThat(SpeculativeGenerate.steady(List.of(finished(1, 10)))).isNaN();
        assertThat(SpeculativeGenerate.steady(List.of(finished(1, 10), finished(1, 10))))
                .isNaN();
    }
}
