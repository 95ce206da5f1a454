package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The host side of the rejection rule for guesses drawn from a draft's q ({@link SpecSampling}). */
class SpecSamplingTest {
    @ParameterizedTest(name = "T={0} top_p={1} top_k={2} min_p={3}: {4}")
    @CsvSource({
        "1,1,0,0,true",
        "0.7,1,0,0,true",
        "0,1,0,0,false",
        "1,0.9,0,0,false",
        "1,1,40,0,false",
        "1,1,1,0,false",
        "1,1,0,0.05,false"
    })
    void onlyTemperatureSamplingTakesGuessesFromQ(float t, float topP, int topK, float minP, boolean applies) {
        assertThat(SpecSampling.applies(new SamplingParams(t, topP, topK, minP, 1)))
                .isEqualTo(applies);
    }

    @Test
    void probabilitiesAreTheSoftmaxAtTheTemperatureOverTheIdsBelowTheLimit() {
        float[] logits = {9, 1, 2, Float.NEGATIVE_INFINITY, 3, 100}; // the first is another row's
        double[] out = new double[7];
        java.util.Arrays.fill(out, -1);
        SpecSampling.probabilities(logits, 1, 4, 0.5, out, 1, 5); // ids 0..3 of row [1, 2, -inf, 3], width 5
        double z = Math.exp(2) + Math.exp(4) + Math.exp(6);
        assertThat(out[0]).isEqualTo(-1); // untouched outside [outOff, outOff + width)
        assertThat(out[1]).isCloseTo(Math.exp(2) / z, within(1e-15));
        assertThat(out[2]).isCloseTo(Math.exp(4) / z, within(1e-15));
        assertThat(out[3]).isZero();
        assertThat(out[4]).isCloseTo(Math.exp(6) / z, within(1e-15));
        assertThat(out[5]).isZero(); // past the limit (100 is not counted)
        assertThat(out[6]).isEqualTo(-1);
    }

    @Test
    void drawFollowsTheWeightsAndEndsAtTheLastPositiveId() {
        double[] q = {0, 0.25, 0, 0.75, 0};
        assertThat(SpecSampling.draw(q, 0, 5, 0.0)).isEqualTo(1);
        assertThat(SpecSampling.draw(q, 0, 5, 0.2499)).isEqualTo(1);
        assertThat(SpecSampling.draw(q, 0, 5, 0.25)).isEqualTo(3);
        assertThat(SpecSampling.draw(q, 0, 5, 1.0)).isEqualTo(3); // rounding past the total
        assertThat(SpecSampling.draw(q, 2, 3, 0.5)).isEqualTo(1); // offsets: ids of q[2, 5)
    }

    @Test
    void theVerdictIsSpecRulesOverTheLogitsRows() {
        // vocab 3, two guesses, rows at logits rows 1..3 of 4; p from those rows at T = 1, u from the verdict's stream
        int v = 3;
        SplittableRandom r = new SplittableRandom(5);
        float[] logits = new float[4 * v];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) r.nextDouble(-2, 2);
        }
        double[] q = {0.2, 0.7, 0.1, 0.3, 0.3, 0.4};
        SamplingParams p = new SamplingParams(1f, 1f, 0, 0f, 42);
        int[] draft = {1, 2};
        double[] pr = new double[3 * v];
        for (int i = 0; i < 3; i++) {
            SpecSampling.probabilities(logits, (1 + i) * v, v, 1, pr, i * v, v);
        }
        SplittableRandom u = SpecSampling.rng(42, 9, 2);
        SpecRule.Verdict want =
                SpecRule.verify(pr, q, draft, 2, v, new double[] {u.nextDouble(), u.nextDouble()}, u.nextDouble());
        assertThat(SpecSampling.verify(logits, 1, v, draft, 2, q, p, 9)).isEqualTo(want);
        // the guesses' and the verdict's streams differ, and differ by counter
        assertThat(SpecSampling.rng(42, 9, 1).nextLong())
                .isNotEqualTo(SpecSampling.rng(42, 9, 2).nextLong());
        assertThat(SpecSampling.rng(42, 9, 2).nextLong())
                .isNotEqualTo(SpecSampling.rng(42, 10, 2).nextLong());
    }
}
