package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorlane.runtime.text.SamplingParams;
import io.tensorlane.runtime.text.TopLogprobs;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.ToIntFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The scheduler with speculative decoding ({@link Speculator}, n-gram guesses) over {@link SpecTarget}: the same
 * tokens as without speculation (greedy and seeded sampling), fewer steps where guesses hit, the KV cache rolled back
 * past rejected guesses, EOS / stop / max_tokens inside an accepted run, the prefix cache, the metrics.
 */
@Timeout(30)
class SpecSchedulerTest {
    static final int VOCAB = 97;
    static final int EOS = 96;
    static final int BS = 4;
    static final int KV_BLOCKS = 256;

    final List<Scheduler> open = new ArrayList<>();
    SpecTarget target;
    BlockAllocator blocks;
    Speculator spec;

    @AfterEach
    void closeAll() {
        open.forEach(Scheduler::close);
    }

    Scheduler start(SpeculativeConfig sc, boolean caching, EngineMetrics metrics, ToIntFunction<int[]> rule) {
        return start(sc, caching, metrics, rule, 4);
    }

    Scheduler start(
            SpeculativeConfig sc, boolean caching, EngineMetrics metrics, ToIntFunction<int[]> rule, int maxSeqs) {
        return start(sc, caching, metrics, rule, maxSeqs, KV_BLOCKS);
    }

    Scheduler start(
            SpeculativeConfig sc,
            boolean caching,
            EngineMetrics metrics,
            ToIntFunction<int[]> rule,
            int maxSeqs,
            int kvBlocks) {
        target = new SpecTarget(VOCAB, kvBlocks, BS, rule);
        blocks = new BlockAllocator(kvBlocks, BS);
        SchedulerConfig config =
                new SchedulerConfig(maxSeqs, 64, 100, 512, 128).withPrefixCaching(caching, "spec-test");
        spec = sc == null ? null : Speculator.of(sc, sc.logitRows(maxSeqs), maxSeqs, metrics);
        Scheduler s = new Scheduler(target, blocks, config, Set.of(EOS), metrics, spec);
        open.add(s);
        return s;
    }

    static ToIntFunction<int[]> periodic() {
        return ctx -> SpecTarget.periodic(ctx, VOCAB);
    }

    static SpeculativeConfig ngram(int k, int n) {
        return SpeculativeConfig.parse("ngram:k=" + k + ",n=" + n, "test");
    }

    /** A prompt that repeats a counting run, so that prompt lookup finds what the target continues with. */
    static int[] repetitive(int n, int salt) {
        return IntStream.range(0, n).map(i -> (salt + i % 12) % (VOCAB - 1)).toArray();
    }

    static SeqRequest req(String id, int[] prompt, int max, SamplingParams p, boolean ignoreEos, int logprobs) {
        return new SeqRequest(id, prompt, max, p, Set.of(), ignoreEos, logprobs);
    }

    /** Runs every request to its end, all submitted at once; the collectors in request order. */
    List<Collector> run(Scheduler s, List<SeqRequest> reqs, boolean speculate) throws Exception {
        List<Collector> cs = new ArrayList<>();
        // every request queued before the second step is planned, however slow the machine (SpecTarget.hold)
        target.hold();
        try {
            for (SeqRequest r : reqs) {
                Collector c = new Collector();
                cs.add(c);
                s.submit(r, c, speculate);
            }
        } finally {
            target.release();
        }
        for (Collector c : cs) {
            c.await();
        }
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        return cs;
    }

    List<SeqRequest> requests(SamplingParams p, boolean ignoreEos, int logprobs) {
        List<SeqRequest> reqs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            reqs.add(req("r" + i, repetitive(9 + 5 * i, 7 * i), 20 + 9 * i, p, ignoreEos, logprobs));
        }
        return reqs;
    }

    private void sameTokensWithAndWithout(SamplingParams p, int k, boolean caching, int logprobs) throws Exception {
        List<Collector> plain = run(start(null, caching, null, periodic()), requests(p, true, logprobs), true);
        int plainSteps = target.batches.size();
        List<Collector> fast = run(start(ngram(k, 3), caching, null, periodic()), requests(p, true, logprobs), true);
        for (int i = 0; i < plain.size(); i++) {
            assertThat(fast.get(i).ids())
                    .as("request " + i)
                    .containsExactly(plain.get(i).ids());
            assertThat(fast.get(i).done.get()).isEqualTo(plain.get(i).done.get());
            assertThat(fast.get(i).completionTokens).isEqualTo(plain.get(i).completionTokens);
            if (logprobs > 0) {
                for (int t = 0; t < plain.get(i).logprobs.size(); t++) {
                    TopLogprobs a = plain.get(i).logprobs.get(t);
                    TopLogprobs b = fast.get(i).logprobs.get(t);
                    assertThat(b.token()).isEqualTo(a.token());
                    assertThat(b.logprob()).isEqualTo(a.logprob());
                    assertThat(b.topIds()).containsExactly(a.topIds());
                }
            }
        }
        Speculator.Counts c = spec.counts();
        assertThat(c.drafts()).isPositive();
        assertThat(c.accepted()).isPositive().isLessThan(c.draftTokens());
        assertThat(target.batches.size()).as("steps with speculation").isLessThan(plainSteps);
        assertThat(blocks.freeBlocks()).isEqualTo(KV_BLOCKS);
    }

    @ParameterizedTest(name = "greedy k={0} prefix caching {1}")
    @CsvSource({"1,true", "4,true", "4,false", "8,true"})
    void greedyTokensAreTheSameAsWithoutSpeculation(int k, boolean caching) throws Exception {
        sameTokensWithAndWithout(SamplingParams.greedy(), k, caching, 0);
    }

    @ParameterizedTest(name = "seeded sampling seed={0} k={1}")
    @CsvSource({"5,4", "6,2", "7,8"})
    void seededSampledTokensAreTheSameAsWithoutSpeculation(long seed, int k) throws Exception {
        // every verify row draws with the counter the plain run gives that token: the same draws, exactly
        sameTokensWithAndWithout(new SamplingParams(1f, 1f, 0, 0f, seed), k, true, 0);
    }

    @Test
    void logprobsOfAcceptedTokensAreTheRowsOwn() throws Exception {
        sameTokensWithAndWithout(SamplingParams.greedy(), 4, true, 3);
    }

    @Test
    void everyGuessRejectedRollsTheKvCacheBack() throws Exception {
        // the target always says an id the context lacks: every guess (an id of the context) is wrong
        ToIntFunction<int[]> hashRule = SpecTarget::unseen;
        int[] p = repetitive(24, 3);
        List<Collector> plain = run(
                start(null, false, null, hashRule), List.of(req("a", p, 40, SamplingParams.greedy(), true, 0)), true);
        Scheduler s = start(ngram(4, 3), false, null, hashRule);
        target.heldCheck = blocks; // one sequence: exactly its tokens' blocks are held at every step
        List<Collector> fast = run(s, List.of(req("a", p, 40, SamplingParams.greedy(), true, 0)), true);
        assertThat(fast.get(0).ids()).containsExactly(plain.get(0).ids());
        Speculator.Counts c = spec.counts();
        assertThat(c.drafts()).isPositive();
        assertThat(c.accepted()).isZero();
        assertThat(blocks.freeBlocks()).isEqualTo(KV_BLOCKS);
    }

    @Test
    void acceptedRunsKeepExactlyTheirBlocks() throws Exception {
        Scheduler s = start(ngram(8, 3), false, null, periodic());
        target.heldCheck = blocks;
        run(s, List.of(req("a", repetitive(40, 0), 120, SamplingParams.greedy(), true, 0)), true);
        Speculator.Counts c = spec.counts();
        assertThat(c.accepted()).isPositive();
        assertThat(c.accepted()).isLessThan(c.draftTokens()); // both kinds of steps ran under the check
    }

    @Test
    void eosInsideAnAcceptedRunEndsTheSequenceThere() throws Exception {
        // counts up to 96 (EOS), then 5 6 ...; the prefill yields 95, then the prompt's "94 95" is followed by 96 5 93
        // 94:
        // the target accepts 96 and 5, but 96 ends the sequence, so 5 is never emitted
        ToIntFunction<int[]> next = ctx -> ctx[ctx.length - 1] == EOS ? 5 : ctx[ctx.length - 1] + 1;
        int[] p = {93, 94, 95, 96, 5, 93, 94};
        Scheduler s = start(ngram(4, 2), true, null, next);
        List<Collector> c = run(s, List.of(req("a", p, 30, SamplingParams.greedy(), false, 0)), true);
        assertThat(c.get(0).ids()).containsExactly(95, 96);
        assertThat(c.get(0).done.get()).isEqualTo(FinishReason.STOP);
        assertThat(c.get(0).completionTokens).isEqualTo(2);
        assertThat(spec.counts().accepted()).isEqualTo(2);
        // the prefill, then one verify step: the last token and 4 guesses
        assertThat(target.batches).hasSize(2);
        assertThat(target.batches.get(1).tokenIds()).containsExactly(95, 96, 5, 93, 94);
        assertThat(blocks.freeBlocks()).isEqualTo(KV_BLOCKS);
    }

    @Test
    void aStopInsideAnAcceptedRunEndsTheSequenceAtThatToken() throws Exception {
        Scheduler s = start(ngram(8, 3), true, null, periodic());
        Collector c = new Collector(7); // the listener's stop string matched at the 7th token
        Scheduler.Handle h = s.submit(req("a", repetitive(36, 1), 60, SamplingParams.greedy(), true, 0), c, true);
        assertThat(c.await()).isEqualTo(FinishReason.STOP);
        assertThat(c.tokens).hasSize(7);
        assertThat(c.completionTokens).isEqualTo(7);
        assertThat(spec.counts().accepted()).isPositive();
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(blocks.freeBlocks()).isEqualTo(KV_BLOCKS);
        assertThat(((Sequence) h).proposer)
                .as("the n-gram index goes with the sequence")
                .isNull();
    }

    @ParameterizedTest(name = "max_tokens={0}")
    @CsvSource({"1", "2", "3", "5", "9"})
    void maxTokensCutsTheGuesses(int max) throws Exception {
        int[] p = repetitive(36, 2);
        List<Collector> plain = run(
                start(null, true, null, periodic()), List.of(req("a", p, max, SamplingParams.greedy(), true, 0)), true);
        List<Collector> fast = run(
                start(ngram(8, 3), true, null, periodic()),
                List.of(req("a", p, max, SamplingParams.greedy(), true, 0)),
                true);
        assertThat(fast.get(0).ids()).hasSize(max).containsExactly(plain.get(0).ids());
        assertThat(fast.get(0).done.get()).isEqualTo(FinishReason.LENGTH);
        // a verify chunk of 1 + d tokens at generated g: g + d + 1 <= max (the accepted run and the target's token fit)
        for (StepBatch b : target.batches.subList(1, target.batches.size())) {
            int generated = b.positions()[0] - p.length + 1; // the chunk starts at the last token
            assertThat(generated + b.tokens()).isLessThanOrEqualTo(max);
        }
        if (max >= 3) {
            assertThat(spec.counts().drafts()).isPositive();
        }
    }

    @ParameterizedTest(name = "prefix caching {0}")
    @CsvSource({"true", "false"})
    void preemptionsInAFullCacheKeepTheTokens(boolean caching) throws Exception {
        // 4 sequences of up to ~70 tokens (18 blocks each) in 40 blocks: the newest are preempted and recomputed,
        // also between a verify step and the next
        List<SeqRequest> reqs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            reqs.add(req("r" + i, repetitive(14 + 3 * i, 5 * i), 40 + 4 * i, SamplingParams.greedy(), true, 0));
        }
        List<Collector> plain = run(start(null, caching, null, periodic(), 4, 200), reqs, true);
        Scheduler s = start(ngram(4, 3), caching, null, periodic(), 4, 40);
        List<Collector> fast = run(s, reqs, true);
        for (int i = 0; i < reqs.size(); i++) {
            assertThat(fast.get(i).ids())
                    .as("request " + i)
                    .containsExactly(plain.get(i).ids());
        }
        assertThat(s.stats().preemptions()).isPositive();
        assertThat(spec.counts().accepted()).isPositive();
        assertThat(blocks.freeBlocks()).isEqualTo(40);
    }

    @Test
    void theOptedOutSequenceNeverSpeculates() throws Exception {
        Scheduler s = start(ngram(4, 3), true, null, periodic());
        run(s, List.of(req("a", repetitive(30, 0), 30, SamplingParams.greedy(), true, 0)), false);
        assertThat(target.batches.subList(1, target.batches.size()))
                .allSatisfy(b -> assertThat(b.tokens()).isEqualTo(1));
        assertThat(spec.counts().drafts()).isZero();
    }

    @Test
    void aSequenceWithPenaltiesNeverSpeculates() throws Exception {
        // a verify chunk's later rows would need counts that include guesses not yet accepted: no guesses at all
        Scheduler s = start(ngram(4, 3), true, null, periodic());
        SamplingPenalties pen = new SamplingPenalties(0f, 0.5f, 1f, java.util.Map.of(), 0);
        SeqRequest r =
                new SeqRequest("p", repetitive(30, 0), 30, SamplingParams.greedy(), Set.of(), true, 0, null, pen);
        run(s, List.of(r), true);
        assertThat(target.batches.subList(1, target.batches.size()))
                .allSatisfy(b -> assertThat(b.tokens()).isEqualTo(1));
        assertThat(spec.counts().drafts()).isZero();
        // the same prompt without penalties does speculate (the check above can fail)
        run(s, List.of(req("q", repetitive(30, 0), 30, SamplingParams.greedy(), true, 0)), true);
        assertThat(spec.counts().drafts()).isPositive();
    }

    @Test
    void blocksOfAcceptedGuessesAreCachedWithTheirTokens() throws Exception {
        // a's accepted guesses fill blocks that the prefix cache registers; b's prompt is a's prompt + output, so it
        // takes those blocks; had a block been registered with the wrong tokens, b's context would differ
        int[] p = repetitive(13, 4);
        Scheduler s = start(ngram(4, 3), true, null, periodic());
        int[] outA = run(s, List.of(req("a", p, 40, SamplingParams.greedy(), true, 0)), true)
                .get(0)
                .ids();
        assertThat(spec.counts().accepted()).isPositive();
        int[] pb = IntStream.concat(Arrays.stream(p), Arrays.stream(outA)).toArray();
        Collector b = run(s, List.of(req("b", pb, 10, SamplingParams.greedy(), true, 0)), true)
                .get(0);
        assertThat(b.cachedTokens).isEqualTo((pb.length - 1) / BS * BS);
        List<Collector> ref = run(
                start(null, false, null, periodic()),
                List.of(req("b", pb, 10, SamplingParams.greedy(), true, 0)),
                true);
        assertThat(b.ids()).containsExactly(ref.get(0).ids());
    }

    @Test
    void metricsCountDraftsAcceptedTokensAndPositions() throws Exception {
        EngineMetrics m = new EngineMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "m", BS, KV_BLOCKS);
        Scheduler s = start(ngram(4, 3), true, m, periodic());
        List<Collector> cs = run(s, requests(SamplingParams.greedy(), true, 0), true);
        Speculator.Counts c = spec.counts();
        String text = m.render();
        String l = "{model_name=\"m\",engine=\"0\"}";
        assertThat(text).contains("tensorlane:spec_decode_num_drafts_total" + l + " " + c.drafts() + ".0");
        assertThat(text).contains("tensorlane:spec_decode_num_draft_tokens_total" + l + " " + c.draftTokens() + ".0");
        assertThat(text).contains("tensorlane:spec_decode_num_accepted_tokens_total" + l + " " + c.accepted() + ".0");
        long perPos = 0;
        for (int i = 0; i < 4; i++) {
            assertThat(text)
                    .contains("tensorlane:spec_decode_num_accepted_tokens_per_pos_total{model_name=\"m\",engine=\"0\","
                            + "position=\"" + i + "\"} " + c.acceptedAt()[i] + ".0");
            perPos += c.acceptedAt()[i];
            if (i > 0) {
                assertThat(c.acceptedAt()[i]).isLessThanOrEqualTo(c.acceptedAt()[i - 1]);
            }
        }
        assertThat(perPos).isEqualTo(c.accepted());
        long tokens = cs.stream().mapToLong(x -> x.tokens.size()).sum();
        assertThat(text).contains("tensorlane:generation_tokens_total" + l + " " + tokens + ".0");
        // every step's tokens: one per sequence per step, plus the accepted guesses
        assertThat(c.drafts()).isPositive();
        EngineMetrics off = new EngineMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "m", BS, 1);
        assertThat(off.render()).doesNotContain("spec_decode");
    }
}
