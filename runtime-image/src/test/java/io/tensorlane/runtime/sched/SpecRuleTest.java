package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SpecRuleTest {
    static Stream<Arguments> equalCases() {
        return Stream.of(
                // draft, k, target rows (k + 1), accepted
                Arguments.of(new int[] {5, 6, 7}, 3, new int[] {5, 6, 7, 8}, 3),
                Arguments.of(new int[] {5, 6, 7}, 3, new int[] {5, 6, 9, 8}, 2),
                Arguments.of(new int[] {5, 6, 7}, 3, new int[] {4, 6, 7, 8}, 0),
                Arguments.of(new int[] {5, 6, 7}, 2, new int[] {5, 6, 1}, 2), // only the first k are verified
                Arguments.of(new int[] {5}, 1, new int[] {5, 5}, 1));
    }

    @ParameterizedTest
    @MethodSource("equalCases")
    void acceptsTheRunOfEqualTokens(int[] draft, int k, int[] target, int accepted) {
        int[] padded = new int[target.length + 2];
        padded[0] = -1;
        padded[1] = -1;
        System.arraycopy(target, 0, padded, 2, target.length);
        assertThat(SpecRule.acceptWhileEqual(draft, k, padded, 2)).isEqualTo(accepted);
    }

    // vocab 3; two guesses; p has 3 rows (the last the bonus row), q 2
    static final double[] P = {0.5, 0.3, 0.2, 0.1, 0.6, 0.3, 0.25, 0.25, 0.5};
    static final double[] Q = {0.2, 0.7, 0.1, 0.3, 0.3, 0.4};

    static Stream<Arguments> rejectionCases() {
        return Stream.of(
                // draft, u (per guess), uDraw, accepted, next
                // guess 0 = id 1: p/q = 0.3/0.7 = 0.43; u 0.4 accepts; guess 1 = id 1: p/q = 2 always accepted;
                // bonus drawn from p_2 = (0.25, 0.25, 0.5) at 0.6 -> id 2
                Arguments.of(new int[] {1, 1}, new double[] {0.4, 0.99}, 0.6, 2, 2),
                // u 0.5 rejects guess 0; residual max(0, p0 - q0) = (0.3, 0, 0.1) -> normalised (0.75, 0, 0.25):
                // uDraw 0.7 -> id 0, 0.8 -> id 2
                Arguments.of(new int[] {1, 1}, new double[] {0.5, 0.0}, 0.7, 0, 0),
                Arguments.of(new int[] {1, 1}, new double[] {0.5, 0.0}, 0.8, 0, 2),
                // guess 0 = id 0: p/q = 2.5 accepted; guess 1 = id 2: p/q = 0.75, u 0.8 rejects; residual of row 1:
                // max(0, (0.1, 0.6, 0.3) - (0.3, 0.3, 0.4)) = (0, 0.3, 0) -> id 1 whatever uDraw
                Arguments.of(new int[] {0, 2}, new double[] {0.9, 0.8}, 0.01, 1, 1),
                Arguments.of(new int[] {0, 2}, new double[] {0.9, 0.8}, 0.99, 1, 1),
                // u just below p/q accepts
                Arguments.of(new int[] {0, 2}, new double[] {0.9, 0.74}, 0.1, 2, 0));
    }

    @ParameterizedTest
    @MethodSource("rejectionCases")
    void rejectionSamplingTable(int[] draft, double[] u, double uDraw, int accepted, int next) {
        assertThat(SpecRule.verify(P, Q, draft, 2, 3, u, uDraw)).isEqualTo(new SpecRule.Verdict(accepted, next));
    }

    @Test
    void theResidualOfEqualDistributionsIsTheTargetItself() {
        double[] p = {0.2, 0.8};
        assertThat(SpecRule.residual(p, p, 0, 2)).containsExactly(0.2, 0.8);
    }

    @Test
    void theFirstTokenIsDistributedAsTheTargetForAnyProposal() {
        SplittableRandom r = new SplittableRandom(3);
        for (int trial = 0; trial < 50; trial++) {
            int v = 2 + r.nextInt(30);
            double[] p = simplex(r, v, trial % 3 == 0);
            double[] q = simplex(r, v, trial % 4 == 0);
            double[] got = SpecRule.firstTokenDistribution(p, q, v);
            for (int i = 0; i < v; i++) {
                assertThat(got[i]).isCloseTo(p[i], within(1e-12));
            }
        }
    }

    @Test
    void drawsByTheRuleFollowTheTargetChiSquare() {
        // 20000 runs of two guesses drawn from q; the first emitted token must follow p_0 (chi-square, p = 1e-4)
        SplittableRandom r = new SplittableRandom(11);
        int v = 12;
        double[] p = new double[3 * v];
        double[] q = new double[2 * v];
        for (int row = 0; row < 3; row++) {
            System.arraycopy(simplex(r, v, false), 0, p, row * v, v);
        }
        for (int row = 0; row < 2; row++) {
            System.arraycopy(simplex(r, v, row == 1), 0, q, row * v, v);
        }
        int draws = 20000;
        long[] seen = new long[v];
        double[] q0 = java.util.Arrays.copyOf(q, v);
        double[] q1 = java.util.Arrays.copyOfRange(q, v, 2 * v);
        for (int d = 0; d < draws; d++) {
            int[] draft = {SpecRule.inverseCdf(q0, r.nextDouble()), SpecRule.inverseCdf(q1, r.nextDouble())};
            SpecRule.Verdict out =
                    SpecRule.verify(p, q, draft, 2, v, new double[] {r.nextDouble(), r.nextDouble()}, r.nextDouble());
            seen[out.accepted() > 0 ? draft[0] : out.next()]++;
        }
        double chi2 = 0;
        for (int i = 0; i < v; i++) {
            double e = p[i] * draws;
            chi2 += (seen[i] - e) * (seen[i] - e) / e;
        }
        assertThat(chi2).isLessThan(chiSquareCritical(v - 1));
    }

    /** Chi-square critical value at p = 1e-4 (Wilson-Hilferty), as kernelcheck's. */
    static double chiSquareCritical(int df) {
        double z = 3.719;
        double a = 2.0 / (9 * df);
        return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
    }

    private static double[] simplex(SplittableRandom r, int v, boolean sparse) {
        double[] x = new double[v];
        double s = 0;
        for (int i = 0; i < v; i++) {
            x[i] = sparse && i % 3 == 0 ? 0 : 0.05 + r.nextDouble();
            s += x[i];
        }
        for (int i = 0; i < v; i++) {
            x[i] /= s;
        }
        return x;
    }
}
