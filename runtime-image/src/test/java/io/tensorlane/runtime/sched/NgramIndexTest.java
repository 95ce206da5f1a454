package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link NgramIndex} against the whole-sequence scan it replaced ({@link NgramScan}): the same guess after every
 * append and cut, for every n 1..8 and k 1..8, over small vocabularies (so matches, ties between occurrences and
 * fallbacks to shorter suffixes are frequent) and larger ones (so the hash tables grow and lose entries).
 */
class NgramIndexTest {
    static final int MAX_N = 8;
    static final int MAX_K = 8;

    /** The index's guess for every k equals the scan's over the same tokens. */
    private static void agrees(NgramIndex index, int[] seq, int len, int n, String where) {
        assertThat(index.length()).as(where).isEqualTo(len);
        int[] got = new int[MAX_K];
        int[] want = new int[MAX_K];
        for (int k = 0; k <= MAX_K; k++) {
            int g = index.propose(k, got);
            int w = NgramScan.propose(seq, len, n, k, want);
            assertThat(Arrays.copyOf(got, g))
                    .as("%s, n %d, k %d, tokens %s", where, n, k, Arrays.toString(Arrays.copyOf(seq, len)))
                    .containsExactly(Arrays.copyOf(want, w));
        }
    }

    @ParameterizedTest
    @CsvSource({"2, 1", "2, 2", "3, 3", "3, 4", "4, 5", "5, 6", "5, 7"})
    void randomAppendsAndCutsProposeWhatTheScanProposes(int vocab, long seed) {
        int capacity = 260;
        for (int n = 1; n <= MAX_N; n++) {
            Random rnd = new Random(seed * 31 + n);
            NgramIndex index = new NgramIndex(n, capacity, rnd.nextLong());
            int[] seq = new int[capacity];
            int len = 0;
            int cuts = 0;
            for (int step = 0; step < 700; step++) {
                double r = rnd.nextDouble();
                if (len < capacity && r < 0.8) {
                    seq[len] = rnd.nextInt(vocab);
                    index.append(seq[len++]);
                } else if (r < 0.97) { // a rolled-back run of guesses
                    int to = Math.max(0, len - 1 - rnd.nextInt(MAX_K + 1));
                    index.truncate(to);
                    Arrays.fill(seq, to, len, -1); // the index keeps its own copy of what it cuts
                    len = to;
                    cuts++;
                } else {
                    int to = rnd.nextInt(len + 1);
                    index.truncate(to);
                    Arrays.fill(seq, to, len, -1);
                    len = to;
                    cuts++;
                }
                agrees(index, seq, len, n, "vocab " + vocab + ", seed " + seed + ", step " + step);
            }
            assertThat(cuts).as("the run cut the sequence").isGreaterThan(20);
        }
    }

    /** The scheduler's call: whole runs of new tokens at once, sometimes a shorter length, then other tokens. */
    @ParameterizedTest
    @CsvSource({"2, 11", "3, 12", "5, 13", "40, 14"})
    void theSessionCallCatchesUpWithTheSequence(int vocab, long seed) {
        int capacity = 400;
        for (int n = 1; n <= MAX_N; n++) {
            Random rnd = new Random(seed * 17 + n);
            NgramIndex index = new NgramIndex(n, capacity, rnd.nextLong());
            int[] seq = new int[capacity];
            int len = 0;
            int[] got = new int[MAX_K];
            int[] want = new int[MAX_K];
            for (int step = 0; step < 300; step++) {
                if (rnd.nextInt(4) == 0) {
                    len = Math.max(0, len - rnd.nextInt(12));
                } else {
                    int to = Math.min(capacity, len + rnd.nextInt(1 + (step == 0 ? 120 : 6)));
                    for (; len < to; len++) {
                        seq[len] = rnd.nextInt(vocab);
                    }
                }
                for (int i = len; i < capacity; i++) {
                    seq[i] = rnd.nextInt(vocab); // past the length: never read
                }
                int k = 1 + rnd.nextInt(MAX_K);
                int g = index.propose(seq, len, k, got);
                int w = NgramScan.propose(seq, len, n, k, want);
                assertThat(Arrays.copyOf(got, g))
                        .as("n %d, k %d, step %d", n, k, step)
                        .containsExactly(Arrays.copyOf(want, w));
                agrees(index, seq, len, n, "step " + step);
            }
        }
    }

    /**
     * Long sequences that copy earlier spans with edits (as code and chat do) over a vocabulary large enough that
     * most n-grams are distinct: the tables grow many times and cuts delete from crowded probe runs.
     */
    @ParameterizedTest
    @ValueSource(ints = {1, 3, 8})
    void longCopyingSequencesOverALargeVocabulary(int n) {
        int capacity = 2500;
        Random rnd = new Random(100 + n);
        NgramIndex index = new NgramIndex(n, capacity, rnd.nextLong());
        int[] seq = new int[capacity];
        int len = 0;
        int[] got = new int[MAX_K];
        int[] want = new int[MAX_K];
        int hits = 0;
        for (int step = 0; len < capacity - 40; step++) {
            if (len > 50 && rnd.nextInt(3) == 0) {
                int from = rnd.nextInt(len - 20);
                for (int i = 0, m = 5 + rnd.nextInt(15); i < m; i++) {
                    seq[len] = rnd.nextInt(10) == 0 ? rnd.nextInt(1000) : seq[from + i];
                    index.append(seq[len++]);
                }
            } else {
                seq[len] = rnd.nextInt(1000);
                index.append(seq[len++]);
            }
            if (rnd.nextInt(5) == 0) {
                // mostly a rolled-back run of guesses, now and then a long cut through crowded tables
                int to = len - rnd.nextInt(Math.min(len, rnd.nextInt(20) == 0 ? 300 : 9));
                index.truncate(to);
                len = to;
            }
            int k = 1 + rnd.nextInt(MAX_K);
            int g = index.propose(k, got);
            int w = NgramScan.propose(seq, len, n, k, want);
            assertThat(Arrays.copyOf(got, g)).as("step %d", step).containsExactly(Arrays.copyOf(want, w));
            hits += g > 0 ? 1 : 0;
        }
        assertThat(hits).as("guesses made").isGreaterThan(100);
        index.truncate(0);
        assertThat(index.propose(4, got)).isZero();
    }

    @ParameterizedTest
    @CsvSource({"1, 2", "3, 2", "3, 100000", "16, 2", "16, 100000"})
    void memoryStaysWithinTheDocumentedBound(int n, int vocab) {
        int capacity = 5000;
        Random rnd = new Random(n * 7L + vocab);
        NgramIndex index = new NgramIndex(n, capacity, rnd.nextLong());
        for (int i = 0; i < capacity; i++) {
            index.append(vocab > capacity ? i : rnd.nextInt(vocab)); // all distinct: every n-gram is new
        }
        assertThat(index.footprintBytes()).isLessThanOrEqualTo((4L + 20L * n) * capacity + 72L * n);
        index.truncate(capacity / 2);
        for (int i = capacity / 2; i < capacity; i++) {
            index.append(rnd.nextInt(vocab));
        }
        assertThat(index.footprintBytes()).isLessThanOrEqualTo((4L + 20L * n) * capacity + 72L * n);
    }

    @Test
    void refusesTokensPastItsCapacityAndBadCuts() {
        NgramIndex index = new NgramIndex(3, 4);
        for (int i = 0; i < 4; i++) {
            index.append(i);
        }
        assertThatThrownBy(() -> index.append(9)).hasMessageContaining("capacity 4");
        assertThatThrownBy(() -> index.propose(new int[8], 5, 2, new int[2]))
                .hasMessageContaining("5 tokens past the n-gram index's capacity 4");
        assertThatThrownBy(() -> index.truncate(5)).hasMessageContaining("of 4 tokens to 5");
        assertThatThrownBy(() -> new NgramIndex(0, 4)).hasMessageContaining("n-gram size must be 1..16");
        assertThatThrownBy(() -> new NgramIndex(3, -1)).hasMessageContaining("capacity must be >= 0");
    }

    @Test
    void prepareTakesInABoundedPieceOfThePromptPerCall() {
        int len = 2 * NgramIndex.PREPARE_TOKENS + 1000;
        Random rnd = new Random(5);
        int[] seq = new int[len + 10];
        for (int i = 0; i < len; i++) {
            seq[i] = rnd.nextInt(3);
        }
        NgramIndex index = new NgramIndex(4, seq.length, 9);
        index.prepare(seq, len);
        assertThat(index.length()).isEqualTo(NgramIndex.PREPARE_TOKENS);
        index.prepare(seq, len);
        assertThat(index.length()).isEqualTo(2 * NgramIndex.PREPARE_TOKENS);
        index.prepare(seq, len);
        assertThat(index.length()).isEqualTo(len);
        agrees(index, seq, len, 4, "prepared");
        index.prepare(seq, 100); // a shorter sequence is a cut
        agrees(index, seq, 100, 4, "cut by prepare");
    }
}
