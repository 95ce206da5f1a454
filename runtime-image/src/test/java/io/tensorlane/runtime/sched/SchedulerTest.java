package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.SamplingParams;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Batching: steps, chunked prefill, preemption, tokens and how sequences end. */
@Timeout(30)
class SchedulerTest extends SchedulerFixture {
    /** The rows of a batch: {first token index, token count} each. */
    static List<int[]> rows(StepBatch b) {
        List<int[]> out = new ArrayList<>();
        for (int t = 0; t < b.tokens(); t++) {
            if (t == 0 || b.tokenRow()[t] != b.tokenRow()[t - 1]) {
                out.add(new int[] {t, 0});
            }
            out.get(out.size() - 1)[1]++;
        }
        return out;
    }

    @Test
    void greedyRunMatchesTheReferenceAndEndsAtMaxTokens() throws Exception {
        Scheduler s = start(4, 64, 32);
        Collector c = new Collector();
        int[] p = prompt(5, 1);
        s.submit(req("a", p, 12), c);
        assertThat(c.await()).isEqualTo(FinishReason.LENGTH);
        assertThat(c.ids()).containsExactly(FakeExecutor.reference(p, 12, VOCAB));
        assertThat(c.promptTokens).isEqualTo(5);
        assertThat(c.completionTokens).isEqualTo(12);
        assertThat(c.finishCalls).isEqualTo(1);
        assertThat(exec.wantLogits).containsOnly(false);
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(blocks.freeBlocks()).isEqualTo(32);
    }

    @Test
    void aNewRequestJoinsTheRunningOnesAtTheNextStepAfterTheirDecodes() throws Exception {
        Scheduler s = start(4, 8, 32);
        exec.gated = true;
        Collector a = new Collector();
        Collector b = new Collector();
        s.submit(req("a", prompt(3, 1), 6), a);
        exec.allow(1);
        waitFor(() -> exec.entered.get() == 2); // step 2 (a's first decode) is planned and waits
        s.submit(req("b", prompt(10, 2), 6), b);
        exec.allow(100);
        a.await();
        b.await();
        StepBatch step3 = exec.batches.get(2);
        List<int[]> r = rows(step3);
        assertThat(r).hasSize(2);
        assertThat(r.get(0)[1]).as("a's decode token first").isEqualTo(1);
        assertThat(step3.positions()[0]).isEqualTo(4);
        assertThat(r.get(1)[1]).as("b's chunk fills the budget").isEqualTo(7);
        assertThat(Arrays.copyOfRange(step3.positions(), 1, 8)).containsExactly(0, 1, 2, 3, 4, 5, 6);
        assertThat(step3.logitTokens()).containsExactly(0); // b's chunk does not reach its end
        assertThat(a.ids()).containsExactly(FakeExecutor.reference(prompt(3, 1), 6, VOCAB));
        assertThat(b.ids()).containsExactly(FakeExecutor.reference(prompt(10, 2), 6, VOCAB));
    }

    static Stream<Arguments> chunking() {
        return Stream.of(
                Arguments.of(20, 8, new int[] {8, 8, 4}),
                Arguments.of(16, 8, new int[] {8, 8}),
                Arguments.of(5, 8, new int[] {5}),
                Arguments.of(9, 3, new int[] {3, 3, 3}));
    }

    @ParameterizedTest
    @MethodSource("chunking")
    void chunkedPrefillSplitsAtTheBudgetWithCorrectPositionsAndSlots(int promptLen, int budget, int[] chunks)
            throws Exception {
        start(2, budget, 32);
        Collector c = new Collector();
        int[] p = prompt(promptLen, 3);
        Scheduler s = open.get(0);
        s.submit(req("a", p, 3), c);
        c.await();
        int pos = 0;
        for (int i = 0; i < chunks.length; i++) {
            StepBatch b = exec.batches.get(i);
            assertThat(b.tokens()).isEqualTo(chunks[i]);
            for (int t = 0; t < b.tokens(); t++) {
                int at = pos + t;
                assertThat(b.positions()[t]).isEqualTo(at);
                assertThat(b.tokenIds()[t]).isEqualTo(p[at]);
                assertThat(b.slots()[t]).isEqualTo(b.blockTables()[at / BS] * BS + at % BS);
            }
            assertThat(b.logitTokens()).hasSize(i == chunks.length - 1 ? 1 : 0);
            pos += chunks[i];
        }
        assertThat(c.ids()).containsExactly(FakeExecutor.reference(p, 3, VOCAB));
    }

    @Test
    void maxSeqsBoundsTheRowsOfEveryStep() throws Exception {
        Scheduler s = start(2, 64, 64);
        exec.gated = true; // all five queued before the second step: two of them must share a step
        List<Collector> cs = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Collector c = new Collector();
            cs.add(c);
            s.submit(req("r" + i, prompt(4 + i, i), 5), c);
        }
        exec.allow(1_000_000);
        for (int i = 0; i < 5; i++) {
            assertThat(cs.get(i).await()).isEqualTo(FinishReason.LENGTH);
            assertThat(cs.get(i).ids()).containsExactly(FakeExecutor.reference(prompt(4 + i, i), 5, VOCAB));
        }
        assertThat(exec.batches).allSatisfy(b -> assertThat(b.rows()).isLessThanOrEqualTo(2));
        assertThat(exec.batches).anySatisfy(b -> assertThat(b.rows()).isEqualTo(2));
    }

    static Stream<Arguments> preemption() {
        return Stream.of(
                Arguments.of("greedy", SamplingParams.greedy(), 0),
                Arguments.of("sampled", new SamplingParams(0.9f, 0.95f, 0, 0f, 42), 0),
                Arguments.of("greedy+logprobs", SamplingParams.greedy(), 3));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("preemption")
    void preemptionUnderBlockPressureRecomputesTheSameTokens(String name, SamplingParams sp, int logprobs)
            throws Exception {
        int n = 4;
        List<int[]> expected = new ArrayList<>();
        Scheduler big = start(n, 64, 100, 64, null);
        for (int pass = 0; pass < 2; pass++) {
            Scheduler s = pass == 0 ? big : start(n, 64, 100, 8, null); // 8 blocks x 4 = 32 tokens for 4 x 22
            // every request is queued before the second step runs: on a busy machine r0 could otherwise finish alone
            exec.gated = true;
            List<Collector> cs = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Collector c = new Collector();
                cs.add(c);
                s.submit(new SeqRequest("r" + i, prompt(6, i), 16, sp.withSeed(100 + i), Set.of(), true, logprobs), c);
            }
            exec.allow(1_000_000);
            for (int i = 0; i < n; i++) {
                assertThat(cs.get(i).await()).isEqualTo(FinishReason.LENGTH);
                if (pass == 0) {
                    expected.add(cs.get(i).ids());
                } else {
                    assertThat(cs.get(i).ids()).as("request %d", i).containsExactly(expected.get(i));
                    if (logprobs > 0) {
                        assertThat(cs.get(i).logprobs)
                                .allSatisfy(lp -> assertThat(lp.topIds()).hasSize(logprobs));
                    }
                }
            }
            assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
            if (pass == 1) {
                assertThat(s.stats().preemptions()).isPositive();
                assertThat(blocks.freeBlocks()).isEqualTo(8);
            }
        }
    }

    static Stream<Arguments> finishes() {
        int[] p = prompt(5, 9);
        int[] ref = FakeExecutor.reference(p, 20, VOCAB);
        int k = 2;
        while (contains(ref, ref[k], k)) {
            k++;
        }
        int stop = ref[k];
        return Stream.of(
                Arguments.of(
                        "max tokens",
                        new SeqRequest("a", p, 7, SamplingParams.greedy(), Set.of(), true, 0),
                        Set.of(EOS),
                        99,
                        FinishReason.LENGTH,
                        7),
                Arguments.of(
                        "eos",
                        new SeqRequest("a", p, 20, SamplingParams.greedy(), Set.of(), false, 0),
                        Set.of(stop),
                        99,
                        FinishReason.STOP,
                        k + 1),
                Arguments.of(
                        "eos ignored",
                        new SeqRequest("a", p, 20, SamplingParams.greedy(), Set.of(), true, 0),
                        Set.of(stop),
                        99,
                        FinishReason.LENGTH,
                        20),
                Arguments.of(
                        "stop id",
                        new SeqRequest("a", p, 20, SamplingParams.greedy(), Set.of(stop), true, 0),
                        Set.of(EOS),
                        99,
                        FinishReason.STOP,
                        k + 1),
                Arguments.of(
                        "listener stop",
                        new SeqRequest("a", p, 20, SamplingParams.greedy(), Set.of(), true, 0),
                        Set.of(EOS),
                        3,
                        FinishReason.STOP,
                        3),
                Arguments.of(
                        "listener stop at max",
                        new SeqRequest("a", p, 3, SamplingParams.greedy(), Set.of(), true, 0),
                        Set.of(EOS),
                        3,
                        FinishReason.STOP,
                        3));
    }

    static boolean contains(int[] a, int v, int before) {
        for (int i = 0; i < before; i++) {
            if (a[i] == v) {
                return true;
            }
        }
        return false;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("finishes")
    void finishReasons(String name, SeqRequest r, Set<Integer> eos, int stopAfter, FinishReason reason, int tokens)
            throws Exception {
        exec = new FakeExecutor(VOCAB, 32, BS);
        blocks = new BlockAllocator(32, BS);
        Scheduler s = new Scheduler(exec, blocks, new SchedulerConfig(4, 64, 10, 256, 64), eos, null);
        open.add(s);
        Collector c = new Collector(stopAfter);
        s.submit(r, c);
        assertThat(c.await()).isEqualTo(reason);
        assertThat(c.ids()).containsExactly(Arrays.copyOf(FakeExecutor.reference(r.promptIds(), 20, VOCAB), tokens));
        assertThat(c.completionTokens).isEqualTo(tokens);
    }

    @Test
    void seededSamplingIsReproducibleAndGreedyIsTheArgmax() throws Exception {
        Scheduler s = start(8, 64, 64);
        int[] p = prompt(6, 4);
        SamplingParams hot = new SamplingParams(1.0f, 1f, 0, 0f, 7);
        List<Collector> cs = new ArrayList<>();
        for (SamplingParams sp : List.of(hot, hot, hot.withSeed(8), SamplingParams.greedy())) {
            Collector c = new Collector();
            cs.add(c);
            s.submit(new SeqRequest("x", p, 24, sp, Set.of(), true, sp.temperature() > 0 ? 2 : 0), c);
        }
        for (Collector c : cs) {
            c.await();
        }
        assertThat(cs.get(0).ids()).containsExactly(cs.get(1).ids());
        assertThat(cs.get(0).ids()).isNotEqualTo(cs.get(2).ids());
        assertThat(cs.get(0).ids()).isNotEqualTo(FakeExecutor.reference(p, 24, VOCAB));
        assertThat(cs.get(3).ids()).containsExactly(FakeExecutor.reference(p, 24, VOCAB));
        assertThat(cs.get(3).logprobs).containsOnlyNulls();
        for (int i = 0; i < 24; i++) {
            assertThat(cs.get(0).logprobs.get(i).token())
                    .isEqualTo(cs.get(0).tokens.get(i));
            assertThat(cs.get(0).logprobs.get(i).topIds()).hasSize(2);
        }
        assertThat(exec.wantLogits).contains(true);
    }
}
