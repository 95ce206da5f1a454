package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class StepRunnerTest {
    @Test
    void bucketsArePowersOfTwoCappedAtMaxSeqs() {
        assertThat(new int[] {bucket(1, 48), bucket(3, 48), bucket(8, 48), bucket(33, 48), bucket(48, 48)})
                .containsExactly(1, 4, 8, 48, 48);
    }

    private static int bucket(int n, int max) {
        return StepRunner.bucketFor(n, max);
    }
}
