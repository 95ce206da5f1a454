package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.Sampler;
import io.tensorlane.runtime.text.SamplingParams;
import io.tensorlane.runtime.text.TopLogprobs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Prompt logprobs through the scheduler ({@link PromptLogprobs}): every prompt token after the first scored by the
 * fake's logits for its prefix, chunks cut to the step's logits-row budget, no prefix-cache reads, preemption mid-prompt
 * gathering nothing twice, and the generated tokens unchanged.
 */
class PromptLogprobsTest extends SchedulerFixture {
    private final AtomicInteger maxRowsSeen = new AtomicInteger();
    private final AtomicInteger scoringSteps = new AtomicInteger();

    /** Records each step's logits rows; the fake does the rest. */
    @Override
    StepExecutor wrap(FakeExecutor fake) {
        return new StepExecutor() {
            @Override
            public StepResult step(StepBatch b, boolean wantLogits) {
                maxRowsSeen.accumulateAndGet(b.logitTokens().length, Math::max);
                if (b.logitTokens().length > b.rows()) {
                    scoringSteps.incrementAndGet();
                }
                return fake.step(b, wantLogits);
            }

            @Override
            public int vocabSize() {
                return fake.vocabSize();
            }
        };
    }

    Scheduler start(int maxSeqs, int maxBatchTokens, int kvBlocks, int logitRows) {
        exec = new FakeExecutor(VOCAB, kvBlocks, BS);
        blocks = new BlockAllocator(kvBlocks, BS);
        SchedulerConfig config = new SchedulerConfig(maxSeqs, maxBatchTokens, 100, 256, 64)
                .withPrefixCaching(true, "fixture")
                .withMaxLogitRows(logitRows);
        Scheduler s = new Scheduler(wrap(exec), blocks, config, Set.of(EOS), null);
        open.add(s);
        return s;
    }

    /** A collector that records the prompt logprobs and how many tokens had come before them. */
    static final class Scored extends Collector {
        final List<List<TopLogprobs>> prompt = new CopyOnWriteArrayList<>();
        volatile int tokensBefore = -1;

        @Override
        public void onPromptLogprobs(List<TopLogprobs> lps) {
            tokensBefore = tokens.size();
            prompt.add(lps);
        }
    }

    /** What the fake's logits say of {@code prompt[p + 1]} after {@code prompt[0..p]} (its context hash). */
    static TopLogprobs expected(int[] prompt, int p, int k) {
        long h = 17;
        for (int q = 0; q <= p; q++) {
            h = h * 31 + prompt[q] + 1;
        }
        float[] row = new float[VOCAB];
        FakeExecutor.fillLogits(row, 0, VOCAB, h * 7 + p);
        return Sampler.logprobs(row, 0, VOCAB, prompt[p + 1], k);
    }

    static List<TopLogprobs> expected(int[] prompt, int k) {
        List<TopLogprobs> out = new ArrayList<>();
        for (int p = 0; p + 1 < prompt.length; p++) {
            out.add(expected(prompt, p, k));
        }
        return out;
    }

    static SeqRequest scoring(String id, int[] prompt, int max, int k) {
        return req(id, prompt, max).withPromptLogprobs(k);
    }

    static void assertScored(Scored c, int[] prompt, int max, int k) throws Exception {
        assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
        assertThat(c.prompt).as("delivered once").hasSize(1);
        assertThat(c.tokensBefore).as("before the first token").isZero();
        assertThat(c.prompt.get(0)).containsExactlyElementsOf(expected(prompt, k));
        assertThat(c.ids())
                .as("generated tokens unchanged")
                .containsExactly(FakeExecutor.reference(prompt, max, VOCAB));
    }

    @Test
    void logSoftmaxOfThePrefixLogits() {
        // the host arithmetic, independently of Sampler: log p(token) = logit - log(sum exp(logits))
        int[] p = prompt(9, 3);
        for (int pos = 0; pos + 1 < p.length; pos++) {
            long h = 17;
            for (int q = 0; q <= pos; q++) {
                h = h * 31 + p[q] + 1;
            }
            float[] row = new float[VOCAB];
            FakeExecutor.fillLogits(row, 0, VOCAB, h * 7 + pos);
            double sum = 0;
            for (float v : row) {
                sum += Math.exp(v);
            }
            TopLogprobs lp = expected(p, pos, 3);
            assertThat((double) lp.logprob())
                    .isCloseTo(row[p[pos + 1]] - Math.log(sum), org.assertj.core.data.Offset.offset(1e-5));
            assertThat(lp.token()).isEqualTo(p[pos + 1]);
            assertThat(lp.topIds()).hasSize(3).startsWith(FakeExecutor.next(h * 7 + pos, VOCAB));
        }
    }

    static Stream<Arguments> budgets() {
        // max seqs, max batch tokens, logits rows, prompt length: chunks cut by the token budget, by the rows, by both
        return Stream.of(
                Arguments.of(4, 64, 64, 23),
                Arguments.of(4, 8, 64, 23),
                Arguments.of(4, 64, 4, 23),
                Arguments.of(4, 7, 5, 40),
                Arguments.of(1, 16, 1, 12),
                Arguments.of(2, 16, 2, 1));
    }

    @ParameterizedTest(name = "max seqs {0}, batch tokens {1}, logits rows {2}, prompt {3}")
    @MethodSource("budgets")
    void scoresEveryPromptTokenWithinTheRowBudget(int maxSeqs, int batchTokens, int rows, int len) throws Exception {
        Scheduler s = start(maxSeqs, batchTokens, 64, rows);
        int[] p = prompt(len, 5);
        Scored c = new Scored();
        s.submit(scoring("a", p, 6, 2), c);
        assertScored(c, p, 6, 2);
        assertThat(c.prompt.get(0)).hasSize(len - 1);
        assertThat(maxRowsSeen.get()).isLessThanOrEqualTo(rows);
        assertThat(c.cachedTokens).isZero();
    }

    @Test
    void sharesTheRowsWithDecodingSequences() throws Exception {
        Scheduler s = start(6, 32, 200, 7);
        exec.gated = true;
        List<Collector> plain = new ArrayList<>();
        List<Scored> scored = new ArrayList<>();
        List<int[]> prompts = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int[] p = prompt(5 + 7 * i, i);
            prompts.add(p);
            if (i % 2 == 0) {
                Collector c = new Collector();
                plain.add(c);
                s.submit(new SeqRequest("p" + i, p, 20, SamplingParams.greedy(), Set.of(), true, 0), c);
            } else {
                Scored c = new Scored();
                scored.add(c);
                s.submit(scoring("s" + i, p, 20, i == 1 ? 0 : 4), c);
            }
        }
        exec.allow(1_000_000);
        for (int i = 0; i < 6; i++) {
            if (i % 2 == 0) {
                Collector c = plain.get(i / 2);
                assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
                assertThat(c.ids()).containsExactly(FakeExecutor.reference(prompts.get(i), 20, VOCAB));
            } else {
                assertScored(scored.get(i / 2), prompts.get(i), 20, i == 1 ? 0 : 4);
            }
        }
        assertThat(maxRowsSeen.get()).isLessThanOrEqualTo(7);
        assertThat(scoringSteps.get()).isPositive();
    }

    @Test
    void readsNothingFromThePrefixCacheButLeavesItsBlocksThere() throws Exception {
        Scheduler s = start(4, 64, 64, 64);
        int[] p = prompt(20, 9);
        Collector first = new Collector();
        s.submit(req("warm", p, 3), first);
        first.await();
        Scored c = new Scored();
        s.submit(scoring("scored", p, 3, 1), c);
        assertScored(c, p, 3, 1);
        assertThat(c.cachedTokens).isZero();
        Collector again = new Collector();
        s.submit(req("again", p, 3), again);
        again.await();
        assertThat(again.cachedTokens).isEqualTo(16);
    }

    @Test
    void preemptedMidPromptGathersEachTokenOnce() throws Exception {
        // a decoding sequence grows into the KV blocks of a scoring one that gets one logits row a step: the scoring
        // one
        // (admitted last) is preempted before its prompt ends, recomputed later
        Scheduler s = start(2, 64, 14, 2);
        exec.gated = true;
        int[] a = prompt(4, 1);
        int[] b = prompt(30, 2);
        Collector ca = new Collector();
        Scored cb = new Scored();
        s.submit(req("a", a, 36), ca);
        s.submit(scoring("b", b, 2, 3), cb);
        exec.allow(1_000_000);
        assertThat(ca.await()).isEqualTo(FinishReason.LENGTH);
        assertScored(cb, b, 2, 3);
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(s.stats().preemptions()).isPositive();
        assertThat(maxRowsSeen.get()).isLessThanOrEqualTo(2);
    }

    @Test
    void randomBatchesUnderBlockPressure() throws Exception {
        Random rnd = new Random(31);
        for (int round = 0; round < 6; round++) {
            int maxSeqs = 1 + rnd.nextInt(4);
            Scheduler s = start(maxSeqs, maxSeqs + rnd.nextInt(24), 20 + rnd.nextInt(20), maxSeqs + rnd.nextInt(6));
            exec.gated = true;
            int n = 2 + rnd.nextInt(5);
            List<Collector> cs = new ArrayList<>();
            List<int[]> ps = new ArrayList<>();
            List<Integer> ks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                int[] p = prompt(1 + rnd.nextInt(40), rnd.nextInt(50));
                int k = rnd.nextBoolean() ? rnd.nextInt(4) : -1;
                Collector c = k >= 0 ? new Scored() : new Collector();
                s.submit(req("r" + i, p, 1 + rnd.nextInt(12)).withPromptLogprobs(k), c);
                cs.add(c);
                ps.add(p);
                ks.add(k);
            }
            exec.allow(1_000_000);
            for (int i = 0; i < n; i++) {
                Collector c = cs.get(i);
                assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
                assertThat(c.ids()).containsExactly(FakeExecutor.reference(ps.get(i), c.ids().length, VOCAB));
                if (c instanceof Scored sc) {
                    assertThat(sc.prompt).hasSize(1);
                    assertThat(sc.prompt.get(0)).containsExactlyElementsOf(expected(ps.get(i), ks.get(i)));
                }
            }
            assertThat(maxRowsSeen.get()).isLessThanOrEqualTo(s.config().maxLogitRows());
            s.close();
            maxRowsSeen.set(0);
        }
    }

    static Stream<Arguments> fits() {
        // wanted tokens of the scoring chunks, rows of the others, max rows -> tokens kept
        return Stream.of(
                Arguments.of(new int[] {10}, 0, 64, new int[] {10}),
                Arguments.of(new int[] {10}, 60, 64, new int[] {4}),
                Arguments.of(new int[] {10, 10}, 60, 64, new int[] {3, 1}),
                Arguments.of(new int[] {2, 10}, 60, 64, new int[] {2, 2}),
                Arguments.of(new int[] {5, 5, 5}, 61, 64, new int[] {1, 1, 1}),
                Arguments.of(new int[] {}, 64, 64, new int[] {}),
                Arguments.of(new int[] {7}, 63, 64, new int[] {1}));
    }

    @ParameterizedTest
    @MethodSource("fits")
    void fitSharesTheSpareRowsInOrder(int[] want, int others, int max, int[] keep) {
        assertThat(PromptLogprobs.fit(want, others, max)).containsExactly(keep);
    }
}
