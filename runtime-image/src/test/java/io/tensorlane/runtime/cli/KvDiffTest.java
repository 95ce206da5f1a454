package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.engine.HostTensors;
import java.util.Random;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * prefixcheck's measure: the same values rounded differently stay well inside the default tolerance (4 x 2^-8), a block
 * of other values (shifted by a token, another block's, zeros) is far outside it, and non-finite values never match.
 */
class KvDiffTest {
    static final double TOL = 0.015625;
    static final int BLOCK = 16 * 64; // 16 slots of one 64-wide KV head

    /** Four blocks of normal values (a K cache's scale). */
    static float[] data(long seed) {
        Random r = new Random(seed);
        float[] a = new float[4 * BLOCK];
        for (int i = 0; i < a.length; i++) {
            a[i] = (float) (r.nextGaussian() * 2.5);
        }
        return a;
    }

    static float bf16(float x) {
        return HostTensors.bf16ToFloat(HostTensors.floatToBf16(x));
    }

    /** Blocks of {@code a} against blocks of {@code b}, one group each. */
    static KvDiff.Stat blocks(float[] a, float[] b) {
        KvDiff d = new KvDiff();
        for (int g = 0; g < a.length / BLOCK; g++) {
            d.add("block " + g, a, g * BLOCK, b, g * BLOCK, BLOCK);
        }
        return d.stat();
    }

    static Arguments row(String name, UnaryOperator<float[]> change, boolean within, String worst) {
        return Arguments.of(name, change, within, worst);
    }

    static Stream<Arguments> rows() {
        return Stream.of(
                row("identical", a -> a.clone(), true, null),
                row(
                        "rounded to bf16 (what a fresh computation in another order differs by)",
                        a -> {
                            float[] b = a.clone();
                            for (int i = 0; i < b.length; i++) {
                                b[i] = bf16(b[i]);
                            }
                            return b;
                        },
                        true,
                        null),
                row(
                        "two bf16 spacings off in every element of block 2",
                        a -> {
                            float[] b = a.clone();
                            for (int i = 2 * BLOCK; i < 3 * BLOCK; i++) {
                                b[i] = (float) (b[i] + 2 * KvDiff.bf16Spacing(b[i]) * Math.signum(b[i]));
                            }
                            return b;
                        },
                        true,
                        null),
                row(
                        "block 1 shifted by one slot (the KV of the neighbouring token)",
                        a -> {
                            float[] b = a.clone();
                            System.arraycopy(a, BLOCK + 64, b, BLOCK, BLOCK - 64);
                            return b;
                        },
                        false,
                        "block 1"),
                row(
                        "block 3 holds block 0's values",
                        a -> {
                            float[] b = a.clone();
                            System.arraycopy(a, 0, b, 3 * BLOCK, BLOCK);
                            return b;
                        },
                        false,
                        "block 3"),
                row(
                        "block 2 never written (zeros)",
                        a -> {
                            float[] b = a.clone();
                            java.util.Arrays.fill(b, 2 * BLOCK, 3 * BLOCK, 0f);
                            return b;
                        },
                        false,
                        "block 2"),
                row(
                        "one slot of block 0 is another token's",
                        a -> {
                            float[] b = a.clone();
                            System.arraycopy(data(9), 5 * 64, b, 5 * 64, 64);
                            return b;
                        },
                        false,
                        "block 0"),
                row(
                        "a NaN",
                        a -> {
                            float[] b = a.clone();
                            b[7] = Float.NaN;
                            return b;
                        },
                        false,
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void roundingMatchesAndOtherContentDoesNot(
            String name, UnaryOperator<float[]> change, boolean within, String worst) {
        float[] a = data(1);
        KvDiff.Stat s = blocks(change.apply(a), a);
        assertThat(s.within(TOL))
                .as(name + ": worst %s at %s", s.worstRel(), s.worstGroup())
                .isEqualTo(within);
        assertThat(s.groups()).isEqualTo(4);
        assertThat(s.elements()).isEqualTo(4L * BLOCK);
        if (worst != null) {
            assertThat(s.worstGroup()).isEqualTo(worst);
            assertThat(s.worstRel()).as("far outside, not near the line").isGreaterThan(10 * TOL);
        }
    }

    @Test
    void roundingToBf16MovesABlockByAtMostHalfASpacing() {
        float[] a = data(2);
        float[] b = a.clone();
        for (int i = 0; i < b.length; i++) {
            b[i] = bf16(b[i]);
        }
        KvDiff.Stat s = blocks(b, a);
        assertThat(s.worstRel()).isGreaterThan(0).isLessThan(0x1p-8);
        assertThat(s.maxSpacings()).isLessThanOrEqualTo(0.5 + 1e-9);
    }

    @Test
    void theSpacingIsBf16s() {
        assertThat(KvDiff.bf16Spacing(1f)).isEqualTo(0x1p-7);
        assertThat(KvDiff.bf16Spacing(-3f)).isEqualTo(0x1p-6);
        assertThat(KvDiff.bf16Spacing(0.01f)).isEqualTo(0x1p-14);
        assertThat(KvDiff.bf16Spacing(0f)).isPositive();
    }

    @Test
    void nothingComparedIsNoMatchAndAnEmptyGroupIsRefused() {
        assertThat(new KvDiff().stat().within(TOL)).isFalse();
        assertThatThrownBy(() -> new KvDiff().add("g", new float[1], 0, new float[1], 0, 0))
                .hasMessageContaining("group g is empty");
        KvDiff.Stat zeros =
                new KvDiff().add("z", new float[8], 0, new float[8], 0, 8).stat();
        assertThat(zeros.within(TOL)).as("two zero blocks are equal").isTrue();
    }
}
