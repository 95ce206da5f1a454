package io.tensorlane.runtime.text;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SamplerTest {
    static final int DRAWS = 200_000;
    static final double TOL = 0.01;

    static float[] logitsOf(double... probs) {
        float[] l = new float[probs.length];
        for (int i = 0; i < probs.length; i++) {
            l[i] = (float) Math.log(probs[i]);
        }
        return l;
    }

    static double[] softmax(float[] logits, double temperature) {
        double max = Double.NEGATIVE_INFINITY;
        for (float l : logits) {
            max = Math.max(max, l);
        }
        double[] p = new double[logits.length];
        double sum = 0;
        for (int i = 0; i < logits.length; i++) {
            p[i] = Math.exp((logits[i] - max) / temperature);
            sum += p[i];
        }
        for (int i = 0; i < p.length; i++) {
            p[i] /= sum;
        }
        return p;
    }

    static double[] frequencies(float[] logits, SamplingParams p) {
        RandomGenerator rng = Sampler.rngFor(p.seed());
        double[] f = new double[logits.length];
        for (int n = 0; n < DRAWS; n++) {
            f[Sampler.sample(logits, 0, logits.length, p, rng)]++;
        }
        for (int i = 0; i < f.length; i++) {
            f[i] /= DRAWS;
        }
        return f;
    }

    static void assertDistribution(double[] actual, double... expected) {
        assertThat(actual).hasSize(expected.length);
        for (int i = 0; i < expected.length; i++) {
            assertThat(actual[i])
                    .as("frequency of token %d in %s", i, Arrays.toString(actual))
                    .isCloseTo(expected[i], within(TOL));
        }
    }

    static SamplingParams params(float t, float topP, int topK, float minP) {
        return new SamplingParams(t, topP, topK, minP, 7L);
    }

    @Test
    void greedyTakesTheFirstMaximum() {
        float[] logits = {9, 9, 9, 1, 3, 3, 2, Float.NEGATIVE_INFINITY};
        assertThat(Sampler.sample(logits, 3, 4, SamplingParams.greedy(), Sampler.rngFor(1)))
                .isEqualTo(1);
        assertThat(Sampler.sample(logits, 0, logits.length, SamplingParams.greedy(), Sampler.rngFor(1)))
                .isZero();
        assertThat(Sampler.argmax(new float[] {Float.NaN, -1, -1}, 0, 3)).isEqualTo(1);
    }

    static Stream<Arguments> distributions() {
        float[] base = logitsOf(0.5, 0.3, 0.15, 0.05);
        double[] t2 = softmax(base, 2.0);
        double[] t05 = softmax(base, 0.5);
        return Stream.of(
                Arguments.of("temperature 1", params(1f, 1f, 0, 0f), new double[] {0.5, 0.3, 0.15, 0.05}),
                Arguments.of("temperature 2", params(2f, 1f, -1, 0f), t2),
                Arguments.of("temperature 0.5", params(0.5f, 1f, 0, 0f), t05),
                Arguments.of("top-k 2", params(1f, 1f, 2, 0f), new double[] {0.625, 0.375, 0, 0}),
                Arguments.of("top-k = vocab is off", params(1f, 1f, 4, 0f), new double[] {0.5, 0.3, 0.15, 0.05}),
                Arguments.of("top-p 0.7 keeps 0.5 + 0.3", params(1f, 0.7f, 0, 0f), new double[] {0.625, 0.375, 0, 0}),
                Arguments.of("top-p 0.8 reached exactly-ish", params(1f, 0.81f, 0, 0f), new double[] {
                    0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0
                }),
                Arguments.of("top-k 3 then top-p over the renormalized 3", params(1f, 0.6f, 3, 0f), new double[] {
                    0.625, 0.375, 0, 0
                }),
                Arguments.of("min-p 0.2 drops p < 0.1", params(1f, 1f, 0, 0.2f), new double[] {
                    0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0
                }),
                Arguments.of("min-p 0.5 drops p < 0.25", params(1f, 1f, 0, 0.5f), new double[] {0.625, 0.375, 0, 0}),
                Arguments.of("min-p with top-k", params(1f, 1f, 3, 0.5f), new double[] {0.625, 0.375, 0, 0}),
                Arguments.of("min-p with top-p", params(1f, 0.99f, 0, 0.2f), new double[] {
                    0.5 / 0.95, 0.3 / 0.95, 0.15 / 0.95, 0
                }),
                Arguments.of("top-p tiny keeps the max", params(1f, 1e-6f, 0, 0f), new double[] {1, 0, 0, 0}),
                Arguments.of("top-k 1 is greedy", params(1.5f, 1f, 1, 0f), new double[] {1, 0, 0, 0}),
                Arguments.of("min-p 1 keeps the max", params(1f, 1f, 0, 1f), new double[] {1, 0, 0, 0}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("distributions")
    void drawsFollowTheFilteredSoftmax(String name, SamplingParams p, double[] expected) {
        assertDistribution(frequencies(logitsOf(0.5, 0.3, 0.15, 0.05), p), expected);
    }

    @Test
    void maskedTokensAreNeverDrawn() {
        float[] logits = {Float.NEGATIVE_INFINITY, 0, Float.NaN, 0, Float.NEGATIVE_INFINITY};
        for (SamplingParams p : new SamplingParams[] {
            params(1f, 1f, 0, 0f), params(1f, 0.9f, 0, 0f), params(1f, 1f, 4, 0f), params(1f, 0.5f, 5, 0.1f)
        }) {
            double[] f = frequencies(logits, p);
            assertThat(f[0] + f[2] + f[4]).as("%s", p).isZero();
        }
        float[] allMasked = {Float.NEGATIVE_INFINITY, Float.NEGATIVE_INFINITY};
        assertThat(Sampler.sample(allMasked, 0, 2, params(1f, 1f, 0, 0f), Sampler.rngFor(1)))
                .isZero();
    }

    @Test
    void sameSeedSameSequenceOtherSeedOtherSequence() {
        float[] logits = new float[1000];
        SplittableRandom r = new SplittableRandom(3);
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) r.nextGaussian();
        }
        SamplingParams p = new SamplingParams(1f, 0.95f, 0, 0f, 42L);
        int[] a = draws(logits, p, 200);
        int[] b = draws(logits, p, 200);
        int[] c = draws(logits, p.withSeed(43L), 200);
        assertThat(a).isEqualTo(b);
        assertThat(a).isNotEqualTo(c);
    }

    static int[] draws(float[] logits, SamplingParams p, int n) {
        RandomGenerator rng = Sampler.rngFor(p.seed());
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = Sampler.sample(logits, 0, logits.length, p, rng);
        }
        return out;
    }

    @Test
    void largeVocabularyWithFiltersStaysInTheTopTokens() {
        int vocab = 151_936;
        float[] logits = new float[vocab + 10];
        SplittableRandom r = new SplittableRandom(5);
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (r.nextGaussian() * 3);
        }
        int[] top50 = Sampler.topK(logits, 10, vocab, 50);
        float cut = logits[10 + top50[49]];
        RandomGenerator rng = Sampler.rngFor(11);
        long t0 = System.nanoTime();
        for (int i = 0; i < 200; i++) {
            int id = Sampler.sample(logits, 10, vocab, new SamplingParams(0.8f, 0.9f, 50, 0.05f, 11), rng);
            assertThat(logits[10 + id]).isGreaterThanOrEqualTo(cut);
            int nucleus = Sampler.sample(logits, 10, vocab, new SamplingParams(0.3f, 0.5f, 0, 0f, 11), rng);
            assertThat(nucleus).isBetween(0, vocab - 1);
        }
        assertThat((System.nanoTime() - t0) / 1e9)
                .as("seconds for 400 draws over 152k logits")
                .isLessThan(10);
    }

    @Test
    void topKOrdersByLogitThenLowerId() {
        float[] logits = {1, 5, 3, 5, 2, 3};
        assertThat(Sampler.topK(logits, 0, 6, 4)).containsExactly(1, 3, 2, 5);
        assertThat(Sampler.topK(logits, 0, 6, 6)).containsExactly(1, 3, 2, 5, 4, 0);
    }

    @Test
    void logprobsAreTheLogSoftmaxOfTheRawLogits() {
        float[] logits = new float[300];
        SplittableRandom r = new SplittableRandom(9);
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (r.nextGaussian() * 4 + 100);
        }
        TopLogprobs all = Sampler.logprobs(logits, 0, 300, 17, 300);
        double max = Double.NEGATIVE_INFINITY;
        for (float lp : all.topLogprobs()) {
            max = Math.max(max, lp);
        }
        double sum = 0;
        for (float lp : all.topLogprobs()) {
            sum += Math.exp(lp - max);
        }
        assertThat(max + Math.log(sum)).as("logsumexp of the full log-softmax").isCloseTo(0.0, within(1e-4));
        for (int i = 1; i < 300; i++) {
            assertThat(all.topLogprobs()[i]).isLessThanOrEqualTo(all.topLogprobs()[i - 1]);
        }
        double[] p = softmax(logits, 1.0);
        assertThat((double) all.logprob()).isCloseTo(Math.log(p[17]), within(1e-4));
        TopLogprobs top5 = Sampler.logprobs(logits, 0, 300, 17, 5);
        assertThat(top5.token()).isEqualTo(17);
        assertThat(top5.topIds()).containsExactly(Arrays.copyOf(all.topIds(), 5));
        assertThat(top5.topIds()[0]).isEqualTo(Sampler.argmax(logits, 0, 300));
        assertThat(Sampler.logprobs(logits, 0, 300, 3, 0).topIds()).isEmpty();
        assertThat(Sampler.logprobs(logits, 0, 300, 3, 1000).topIds()).hasSize(300);
    }

    @Test
    void logprobsIgnoreTheSamplingTemperature() {
        float[] logits = logitsOf(0.5, 0.3, 0.15, 0.05);
        TopLogprobs t = Sampler.logprobs(logits, 0, 4, 2, 2);
        assertThat((double) t.logprob()).isCloseTo(Math.log(0.15), within(1e-6));
        assertThat(t.topIds()).containsExactly(0, 1);
        assertThat((double) t.topLogprobs()[1]).isCloseTo(Math.log(0.3), within(1e-6));
    }

    @Test
    void badRangesAreRejected() {
        float[] logits = new float[4];
        assertThatThrownBy(() -> Sampler.sample(logits, 2, 4, SamplingParams.greedy(), Sampler.rngFor(1)))
                .isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Sampler.logprobs(logits, 0, 4, 4, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> Sampler.logprobs(logits, 0, 4, 0, -1)).hasMessageContaining("k must be >= 0");
        assertThatThrownBy(() -> Sampler.argmax(logits, 0, 0)).hasMessageContaining("vocab must be > 0");
    }
}
