package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.sched.SamplingRows;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code bench-model --masks}' masks: the sampler's mask width, no bit past the vocabulary, id 0 and about half allowed. */
class ModelBenchMasksTest {
    @ParameterizedTest
    @ValueSource(ints = {1, 31, 32, 33, 4096, 128_256, 151_936})
    void randomMasksFitTheVocabulary(int vocab) {
        int[][] masks = ModelBenchSteps.randomMasks(new SplittableRandom(vocab), 16, vocab);
        assertThat(masks).hasNumberOfRows(16);
        long allowed = 0;
        for (int[] m : masks) {
            assertThat(m).hasSize(SamplingRows.maskWords(vocab));
            assertThat(m[0] & 1).as("id 0 allowed").isEqualTo(1);
            for (int id = vocab; id < m.length * 32; id++) {
                assertThat(m[id >>> 5] >>> (id & 31) & 1)
                        .as("id %d past the vocabulary", id)
                        .isZero();
            }
            for (int w : m) allowed += Integer.bitCount(w);
        }
        if (vocab >= 4096) {
            assertThat(allowed / (16.0 * vocab)).as("share allowed").isBetween(0.45, 0.55);
        }
    }
}
