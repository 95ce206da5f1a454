package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.SamplingParams;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The host reference of the sampler's penalty arithmetic (vLLM v1's and transformers' semantics), the entries a
 * {@link PenaltyState} builds for a sequence, and their place in the device layout ({@link SamplingRows}).
 */
class PenaltyReferenceTest {
    static Stream<Arguments> oneLogit() {
        // logit, generated count, presence, frequency, repetition -> expected (exact fp32 values)
        return Stream.of(
                Arguments.of(2f, 0, 0f, 0f, 2f, 1f), // prompt-only id, positive: divided
                Arguments.of(-2f, 0, 0f, 0f, 2f, -4f), // negative: multiplied (transformers: score * penalty)
                Arguments.of(0f, 0, 0f, 0f, 2f, 0f),
                Arguments.of(3f, 2, 0f, 0.5f, 1f, 2f), // OpenAI: frequency x count
                Arguments.of(3f, 2, 0.25f, 0f, 1f, 2.75f), // presence once
                Arguments.of(3f, 0, 0.25f, 0.5f, 1f, 3f), // not generated: neither
                Arguments.of(3f, 3, 0.5f, 0.5f, 1.5f, 0f), // 3/1.5=2, -1.5, -0.5
                Arguments.of(-1f, 1, -0.5f, -0.5f, 0.5f, 0.5f), // negative penalties raise: -0.5 + 0.5 + 0.5
                Arguments.of(Float.NEGATIVE_INFINITY, 4, 1f, 1f, 1.3f, Float.NEGATIVE_INFINITY),
                Arguments.of(1f, 1, 0f, 0f, 1.3f, 1f / 1.3f));
    }

    @ParameterizedTest(name = "l={0} count={1} pres={2} freq={3} rep={4}")
    @MethodSource("oneLogit")
    void penalizesOneLogit(float l, int count, float pres, float freq, float rep, float want) {
        RowPenalty p = new RowPenalty(pres, freq, rep, new int[0], 0);
        assertThat(PenaltyReference.penalize(l, count, p)).isEqualTo(want);
    }

    @Test
    void biasFirstThenPenaltiesAndBansWin() {
        float[] x = {1f, 2f, 3f, 4f, 5f};
        // bias +2 on id 1, -inf on id 4; count pairs for ids 1 (generated twice) and 3 (prompt only)
        int[] pairs = {1, Float.floatToRawIntBits(2f), 4, Float.floatToRawIntBits(Float.NEGATIVE_INFINITY), 1, 2, 3, 0};
        PenaltyReference.apply(x, 0, 5, new RowPenalty(0.5f, 0.25f, 2f, pairs, 2));
        // id 1: (2 + 2) / 2 - 0.25 * 2 - 0.5 = 1; id 3: 4 / 2 = 2; id 4 banned; others untouched
        assertThat(x).containsExactly(1f, 1f, 3f, 2f, Float.NEGATIVE_INFINITY);
    }

    @Test
    void stateCountsGeneratedTokensAndThePromptOnlyForRepetition() {
        int[] tokens = {7, 7, 9, /* generated */ 9, 3, 9, 0};
        PenaltyState rep =
                PenaltyState.of(new SamplingPenalties(0f, 0f, 1.2f, Map.of(), 0), new int[] {7, 7, 9}, Set.of());
        // before any output: one pair per distinct prompt id, count 0
        assertThat(rep.row(tokens, 0).pairs()).containsExactly(7, 0, 9, 0);
        assertThat(rep.row(tokens, 3).pairs()).containsExactly(7, 0, 9, 2, 3, 1);
        PenaltyState freq =
                PenaltyState.of(new SamplingPenalties(0f, 0.5f, 1f, Map.of(), 0), new int[] {7, 7, 9}, Set.of());
        // frequency only: the prompt is not counted (no pair for 7)
        assertThat(freq.row(tokens, 2).pairs()).containsExactly(9, 1, 3, 1);
        assertThat(freq.row(tokens, 4).pairs()).containsExactly(9, 2, 3, 1, 0, 1);
    }

    @Test
    void aRollbackRecountsFromTheStart() {
        PenaltyState s = PenaltyState.of(new SamplingPenalties(0f, 0.5f, 1.2f, Map.of(), 0), new int[] {7}, Set.of());
        assertThat(s.row(new int[] {7, 3, 3, 4}, 3).pairs()).containsExactly(7, 0, 3, 2, 4, 1);
        // two of the three rejected, the tokens after the first overwritten: counts as if only 7 | 3 had been seen
        assertThat(s.row(new int[] {7, 3, 9, 9}, 1).pairs()).containsExactly(7, 0, 3, 1);
        assertThat(s.row(new int[] {7, 3, 9, 9}, 3).pairs()).containsExactly(7, 0, 3, 1, 9, 2);
    }

    @Test
    void minTokensBansUntilReachedAndBiasIsSorted() {
        int[] prompt = {5};
        PenaltyState s =
                PenaltyState.of(new SamplingPenalties(0f, 0f, 1f, Map.of(9, -3f, 2, 4f), 2), prompt, Set.of(2, 11));
        int inf = Float.floatToRawIntBits(Float.NEGATIVE_INFINITY);
        RowPenalty before = s.row(new int[] {5, 1}, 1);
        // id 2 is biased and banned: the ban wins; pairs in id order
        assertThat(before.pairs()).containsExactly(2, inf, 9, Float.floatToRawIntBits(-3f), 11, inf);
        assertThat(before.biasPairs()).isEqualTo(3);
        RowPenalty after = s.row(new int[] {5, 1, 1}, 2);
        assertThat(after.pairs()).containsExactly(2, Float.floatToRawIntBits(4f), 9, Float.floatToRawIntBits(-3f));
        assertThat(after.countPairs()).isZero();
    }

    @Test
    void badWordsBanTheirLastIdAfterTheirPrefix() {
        int inf = Float.floatToRawIntBits(Float.NEGATIVE_INFINITY);
        SamplingPenalties p = new SamplingPenalties(
                0f, 0f, 1f, Map.of(8, 2f), 0, java.util.List.of(new int[] {4}, new int[] {1, 2, 8}));
        PenaltyState s = PenaltyState.of(p, new int[] {1, 2}, Set.of());
        // the prompt ends with 1, 2 but bad words look at the output only: only the one-id word is banned
        assertThat(s.row(new int[] {1, 2}, 0).pairs()).containsExactly(4, inf, 8, Float.floatToRawIntBits(2f));
        // output 1, 2: the next 8 would complete the word; the ban replaces 8's bias
        assertThat(s.row(new int[] {1, 2, 1, 2}, 2).pairs()).containsExactly(4, inf, 8, inf);
        assertThat(s.row(new int[] {1, 2, 1, 2, 3}, 3).pairs()).containsExactly(4, inf, 8, Float.floatToRawIntBits(2f));
        assertThat(PenaltyState.of(
                        new SamplingPenalties(0f, 0f, 1f, Map.of(), 0, java.util.List.of(new int[] {4})),
                        new int[] {1},
                        Set.of()))
                .as("bad words alone make a penalised row")
                .isNotNull();
    }

    @Test
    void neutralPenaltiesMakeNoState() {
        assertThat(PenaltyState.of(SamplingPenalties.NONE, new int[] {1}, Set.of(2)))
                .isNull();
        assertThat(PenaltyState.of(new SamplingPenalties(0f, 0f, 1f, Map.of(), 0), new int[] {1}, Set.of()))
                .isNull();
        assertThat(SamplingPenalties.NONE.isNone()).isTrue();
        assertThat(new SamplingPenalties(0f, 0f, 1f, Map.of(), 1).isNone()).isFalse();
    }

    @Test
    void penalisedRowsAreLaidOutForTheKernel() {
        RowPenalty a = new RowPenalty(0.5f, 0.25f, 1.5f, new int[] {3, 0, 4, 1, 8, 2}, 1);
        RowPenalty b = new RowPenalty(0f, 0f, 1f, new int[] {6, Float.floatToRawIntBits(1f)}, 1);
        SamplingRows r = new SamplingRows(3)
                .set(0, SamplingParams.greedy(), 0)
                .penalty(0, a)
                .penalty(2, b);
        assertThat(r.trivial())
                .as("penalties must be uploaded even for greedy rows")
                .isFalse();
        int cap = 4;
        ByteBuffer w = ByteBuffer.allocate(4 * 14 * cap).order(ByteOrder.LITTLE_ENDIAN);
        w.asIntBuffer().put(r.pack(cap));
        assertThat(w.getFloat(32 * cap)).isEqualTo(0.5f); // presence[0]
        assertThat(w.getFloat(36 * cap)).isEqualTo(0.25f); // frequency[0]
        assertThat(w.getFloat(40 * cap)).isEqualTo(1.5f); // repetition[0]
        assertThat(w.getFloat(40 * cap + 4)).isEqualTo(1f); // unpenalised row 1: neutral
        assertThat(new int[] {w.getInt(44 * cap), w.getInt(48 * cap), w.getInt(52 * cap)})
                .containsExactly(0, 1, 2);
        assertThat(new int[] {w.getInt(44 * cap + 4), w.getInt(48 * cap + 4), w.getInt(52 * cap + 4)})
                .as("row 1 has no pairs: the kernel reads none")
                .containsExactly(0, 0, 0);
        assertThat(new int[] {w.getInt(44 * cap + 8), w.getInt(48 * cap + 8), w.getInt(52 * cap + 8)})
                .containsExactly(3, 1, 0); // row 2's pairs start after row 0's three
        assertThat(r.packPenalties()).containsExactly(3, 0, 4, 1, 8, 2, 6, Float.floatToRawIntBits(1f));
        assertThat(new SamplingRows(2).packPenalties()).isEmpty();
        assertThat(r.padTo(4).penalty(2)).isSameAs(b);
    }

    @Test
    void deviceBufferBoundCoversTheLongestRow() {
        // a row can have one count pair per distinct id of its sequence: at most min(max model len, vocab)
        assertThat(PenaltyState.maxPairsPerRow(4096, 1000)).isEqualTo(1000 + 300 + 128 + 128);
        assertThat(PenaltyState.maxPairsPerRow(4096, 152064)).isEqualTo(4096 + 300 + 128 + 128);
    }
}
