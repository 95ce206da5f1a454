package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.SamplingParams;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The scheduler with a draft model ({@link DraftProposer} over a CPU draft, {@link SpecTarget}, whose fake paged KV
 * cache fails a stale slot): greedy output equals the plain run's with preemptions and prefix caching; a preempted
 * sequence's draft session goes with its blocks and the next one feeds it again; a draft that always agrees keeps all
 * k guesses of every step; sampled output keeps the plain run's distribution (two-sample chi-square, with a control
 * showing the test sees a small change of temperature).
 */
@Timeout(60)
class DraftSchedulerTest {
    static final int VOCAB = SpecSchedulerTest.VOCAB;
    static final int BS = 4;
    static final int TABLE = 128;

    final List<Scheduler> open = new ArrayList<>();

    @AfterEach
    void closeAll() {
        open.forEach(Scheduler::close);
    }

    static ToIntFunction<int[]> periodic() {
        return ctx -> SpecTarget.periodic(ctx, VOCAB);
    }

    /** A proposer that counts the sessions opened and closed around another. */
    static final class Counting implements Proposer {
        final Proposer inner;
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();

        Counting(Proposer inner) {
            this.inner = inner;
        }

        @Override
        public Session open(int capacity) {
            opened.incrementAndGet();
            Session s = inner.open(capacity);
            return new Session() {
                @Override
                public int propose(int[] tokens, int length, int k, int[] out) {
                    return s.propose(tokens, length, k, out);
                }

                @Override
                public void prepare(int[] tokens, int length) {
                    s.prepare(tokens, length);
                }

                @Override
                public int proposeSampled(
                        int[] tokens,
                        int length,
                        int k,
                        int[] out,
                        double temperature,
                        java.util.random.RandomGenerator rng,
                        double[] q,
                        int vocab) {
                    return s.proposeSampled(tokens, length, k, out, temperature, rng, q, vocab);
                }

                @Override
                public void close() {
                    closed.incrementAndGet();
                    s.close();
                }
            };
        }
    }

    /** A draft over its own fake cache of {@code blocks} blocks, and the speculator asking it for k guesses. */
    record Draft(SpecTarget model, BlockAllocator blocks, Counting proposer, Speculator spec) {
        static Draft of(ToIntFunction<int[]> rule, int k, int maxSeqs, int blocks) {
            return of(rule, k, maxSeqs, blocks, false);
        }

        /** {@code sampled}: temperature-only requests get guesses drawn from the draft's q (the rejection rule). */
        static Draft of(ToIntFunction<int[]> rule, int k, int maxSeqs, int blocks, boolean sampled) {
            SpecTarget m = new SpecTarget(VOCAB, blocks, BS, rule);
            BlockAllocator b = new BlockAllocator(blocks, BS);
            Counting p = new Counting(new DraftProposer(m, b, 16, TABLE, k + 1, VOCAB, sampled));
            SpeculativeConfig sc =
                    new SpeculativeConfig(SpeculativeConfig.Method.DRAFT, k, 1, java.nio.file.Path.of("d"), 0);
            return new Draft(m, b, p, new Speculator(sc, p, maxSeqs * (k + 1), maxSeqs, null));
        }
    }

    /** Runs {@code reqs} (all queued before the first step) on a fresh scheduler; the collectors, in order. */
    List<Collector> run(
            SpecTarget target, int kvBlocks, int maxSeqs, boolean caching, Speculator spec, List<SeqRequest> reqs)
            throws Exception {
        BlockAllocator blocks = new BlockAllocator(kvBlocks, BS);
        SchedulerConfig config =
                new SchedulerConfig(maxSeqs, 64, 100_000, 512, TABLE).withPrefixCaching(caching, "draft-sched");
        Scheduler s = new Scheduler(target, blocks, config, Set.of(SpecSchedulerTest.EOS), null, spec);
        open.add(s);
        List<Collector> cs = new ArrayList<>();
        target.hold();
        try {
            for (SeqRequest r : reqs) {
                Collector c = new Collector();
                cs.add(c);
                s.submit(r, c, true);
            }
        } finally {
            target.release();
        }
        for (Collector c : cs) {
            c.await();
        }
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(blocks.freeBlocks()).isEqualTo(kvBlocks);
        lastPreemptions = s.stats().preemptions();
        return cs;
    }

    long lastPreemptions;

    static SeqRequest req(String id, int[] prompt, int max, SamplingParams p) {
        return new SeqRequest(id, prompt, max, p, Set.of(), true, 0);
    }

    @ParameterizedTest(name = "prefix caching {0}, draft {1}")
    @CsvSource({"true,same", "false,same", "true,unseen"})
    void preemptionsAndThePrefixCacheKeepTheGreedyTokens(boolean caching, String rule) throws Exception {
        // 6 sequences of up to ~70 tokens in 40 blocks: the newest are preempted and recomputed, between verify steps
        // too; the second half repeat the first half's prompts, so the prefix cache serves them
        List<SeqRequest> reqs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int[] prompt = SpecSchedulerTest.repetitive(14 + 3 * (i % 3), 5 * (i % 3));
            reqs.add(req("r" + i, prompt, 40 + 4 * i, SamplingParams.greedy()));
        }
        List<Collector> plain = run(new SpecTarget(VOCAB, 200, BS, periodic()), 200, 4, caching, null, reqs);
        Draft d = Draft.of(rule.equals("same") ? periodic() : SpecTarget::unseen, 4, 4, 400);
        List<Collector> fast = run(new SpecTarget(VOCAB, 40, BS, periodic()), 40, 4, caching, d.spec(), reqs);
        for (int i = 0; i < reqs.size(); i++) {
            assertThat(fast.get(i).ids())
                    .as("request " + i)
                    .containsExactly(plain.get(i).ids());
        }
        assertThat(lastPreemptions).isPositive();
        Speculator.Counts c = d.spec().counts();
        assertThat(c.drafts()).isPositive();
        if (rule.equals("same")) {
            assertThat(c.accepted()).isEqualTo(c.draftTokens()); // the draft is the target: every guess is kept
        }
        // a preempted sequence's session went with it and a new one fed its tokens again
        assertThat(d.proposer().opened.get()).isGreaterThan(reqs.size());
        assertThat(d.proposer().closed.get()).isEqualTo(d.proposer().opened.get());
        assertThat(d.blocks().freeBlocks())
                .as("the draft's blocks are all back")
                .isEqualTo(400);
    }

    @ParameterizedTest(name = "k={0}")
    @CsvSource({"1", "4", "7"})
    void aDraftThatAlwaysAgreesKeepsAllKGuessesEveryStep(int k) throws Exception {
        int steps = 6;
        int max = 1 + (k + 1) * steps; // the prefill's token, then k guesses + the target's token a step: never cut
        SpecTarget target = new SpecTarget(VOCAB, 256, BS, periodic());
        Draft d = Draft.of(periodic(), k, 4, 256);
        List<Collector> out = run(
                target,
                256,
                4,
                true,
                d.spec(),
                List.of(req("a", SpecSchedulerTest.repetitive(21, 3), max, SamplingParams.greedy())));
        assertThat(out.get(0).tokens).hasSize(max);
        Speculator.Counts c = d.spec().counts();
        assertThat(c.drafts()).isEqualTo(steps);
        assertThat(c.draftTokens()).isEqualTo((long) k * steps);
        assertThat(c.accepted()).isEqualTo((long) k * steps);
        for (int i = 0; i < k; i++) {
            assertThat(c.acceptedAt()[i]).as("accepted at position " + i).isEqualTo(steps);
        }
        assertThat(target.batches).hasSize(1 + steps); // the prefill, then one verify step per k + 1 tokens
        assertThat(target.batches.subList(1, target.batches.size()))
                .allSatisfy(b -> assertThat(b.tokens()).isEqualTo(k + 1));
    }

    @Test
    void aFailingDraftSwitchesSpeculationOffAndTheRequestsGoOn() throws Exception {
        // the draft's step fails on its 20th call (a GPU error of the draft's engine, say): no more guesses, the
        // sequences finish with the plain run's tokens
        SpecTarget draftModel = new SpecTarget(VOCAB, 256, BS, periodic());
        AtomicInteger calls = new AtomicInteger();
        StepExecutor failing = new StepExecutor() {
            @Override
            public StepResult step(StepBatch batch, boolean wantLogits) {
                if (calls.incrementAndGet() == 20) {
                    throw new IllegalStateException("draft step failed (test)");
                }
                return draftModel.step(batch, wantLogits);
            }

            @Override
            public int vocabSize() {
                return VOCAB;
            }
        };
        SpeculativeConfig sc =
                new SpeculativeConfig(SpeculativeConfig.Method.DRAFT, 4, 1, java.nio.file.Path.of("d"), 0);
        Speculator spec = new Speculator(
                sc, new DraftProposer(failing, new BlockAllocator(256, BS), 16, TABLE, 5, VOCAB, false), 20, 4, null);
        List<SeqRequest> reqs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            reqs.add(req("f" + i, SpecSchedulerTest.repetitive(12 + i, 3 * i), 40, SamplingParams.greedy()));
        }
        List<Collector> plain = run(new SpecTarget(VOCAB, 256, BS, periodic()), 256, 4, true, null, reqs);
        List<Collector> fast = run(new SpecTarget(VOCAB, 256, BS, periodic()), 256, 4, true, spec, reqs);
        for (int i = 0; i < reqs.size(); i++) {
            assertThat(fast.get(i).ids())
                    .as("request " + i)
                    .containsExactly(plain.get(i).ids());
            assertThat(fast.get(i).done.get()).isEqualTo(FinishReason.LENGTH);
        }
        assertThat(spec.failure()).hasMessage("draft step failed (test)");
        assertThat(calls.get()).as("no draft step after the failure").isEqualTo(20);
        assertThat(spec.counts().drafts()).isPositive(); // it did speculate before
    }

    @Test
    void withBatchOneTheDraftGuessesOnlyWhenOneSequenceDecodes() throws Exception {
        // four prompts of one length, prefilled in one or two steps (4 x 14 <= 64 tokens); max_tokens 8, 16, 24, 60:
        // while two
        // or more decode that could take guesses, none does (each costs k draft steps); the last one speculates once
        // it is the only one (one at its last token takes no guesses and does not count)
        List<SeqRequest> reqs = new ArrayList<>();
        int[] max = {8, 16, 24, 60};
        for (int i = 0; i < 4; i++) {
            reqs.add(req("b" + i, SpecSchedulerTest.repetitive(14, 5 * i), max[i], SamplingParams.greedy()));
        }
        List<Collector> plain = run(new SpecTarget(VOCAB, 256, BS, periodic()), 256, 4, true, null, reqs);
        SpecTarget m = new SpecTarget(VOCAB, 256, BS, periodic());
        SpeculativeConfig sc = SpeculativeConfig.parse("draft:d,k=4", "test");
        assertThat(sc.batch()).isEqualTo(1);
        Speculator spec = new Speculator(
                sc, new DraftProposer(m, new BlockAllocator(256, BS), 16, TABLE, 5, VOCAB, false), 20, 4, null);
        SpecTarget target = new SpecTarget(VOCAB, 256, BS, periodic());
        List<Collector> fast = run(target, 256, 4, true, spec, reqs);
        for (int i = 0; i < reqs.size(); i++) {
            assertThat(fast.get(i).ids())
                    .as("request " + i)
                    .containsExactly(plain.get(i).ids());
        }
        assertThat(spec.counts().drafts()).isPositive();
        boolean alongside = false;
        for (StepBatch b : target.batches) {
            // a verify chunk: several tokens of a row past its 14-token prompt (prefill chunks start inside it, and the
            // scheduler may plan its first step before every prompt has arrived)
            int[] perRow = new int[b.rows()];
            int[] first = new int[b.rows()];
            java.util.Arrays.fill(first, Integer.MAX_VALUE);
            for (int t = 0; t < b.tokens(); t++) {
                perRow[b.tokenRow()[t]]++;
                first[b.tokenRow()[t]] = Math.min(first[b.tokenRow()[t]], b.positions()[t]);
            }
            long verifying = java.util.stream.IntStream.range(0, b.rows())
                    .filter(r -> perRow[r] > 1 && first[r] >= 14)
                    .count();
            assertThat(verifying).as("sequences with guesses in one step").isLessThanOrEqualTo(1);
            alongside |= verifying == 1 && b.rows() > 1;
        }
        assertThat(alongside).as("a sequence at its last token does not count").isTrue();
        assertThat(target.batches).anySatisfy(b -> assertThat(b.tokens()).isEqualTo(5)); // one sequence, 4 guesses
    }

    /** The generated tokens at positions 1..{@code upTo} of {@code n} sampled runs of one prompt, seeds from {@code seed0}. */
    List<Map<Integer, Integer>> sampled(Speculator spec, float temperature, long seed0, int n, int upTo)
            throws Exception {
        int[] prompt = SpecSchedulerTest.repetitive(15, 2);
        List<SeqRequest> reqs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            reqs.add(req("s" + i, prompt, upTo + 1, new SamplingParams(temperature, 1f, 0, 0f, seed0 + i)));
        }
        List<Collector> cs = run(new SpecTarget(VOCAB, 512, BS, periodic()), 512, 16, false, spec, reqs);
        List<Map<Integer, Integer>> counts = new ArrayList<>();
        for (int pos = 1; pos <= upTo; pos++) {
            Map<Integer, Integer> m = new HashMap<>();
            for (Collector c : cs) {
                m.merge(c.tokens.get(pos), 1, Integer::sum);
            }
            counts.add(m);
        }
        return counts;
    }

    @Test
    void sampledTokensWithADraftFollowThePlainDistribution() throws Exception {
        int n = 3000;
        int upTo = 4;
        List<Map<Integer, Integer>> plain = sampled(null, 1f, 1_000, n, upTo);
        Draft d = Draft.of(periodic(), 4, 16, 2048);
        List<Map<Integer, Integer>> fast = sampled(d.spec(), 1f, 500_000, n, upTo); // other seeds: not the same draws
        Speculator.Counts c = d.spec().counts();
        assertThat(c.accepted()).as("guesses kept").isPositive();
        assertThat(c.accepted()).as("and guesses rejected").isLessThan(c.draftTokens());
        for (int pos = 0; pos < upTo; pos++) {
            double[] t = homogeneity(plain.get(pos), fast.get(pos));
            assertThat(t[0])
                    .as("chi-square at position " + (pos + 1) + " (df " + t[1] + ")")
                    .isLessThan(t[2]);
        }
        // the control: the same test tells temperature 1 from 0.8 (the rule's token a little more likely)
        List<Map<Integer, Integer>> cooler = sampled(null, 0.8f, 1_000, n, upTo);
        double[] t = homogeneity(plain.get(0), cooler.get(0));
        assertThat(t[0]).as("chi-square of T=1 vs T=0.8").isGreaterThan(t[2]);
    }

    @Test
    void guessesDrawnFromTheDraftsQKeepThePlainDistribution() throws Exception {
        // a draft that peaks elsewhere than the target (its logits otherwise alike): the rejection rule keeps some
        // guesses (min(1, p/q)) and resamples the others from the residual; the output must follow the plain run's
        int n = 3000;
        int upTo = 4;
        List<Map<Integer, Integer>> plain = sampled(null, 1f, 1_000, n, upTo);
        Draft d = Draft.of(SpecTarget::unseen, 4, 16, 2048, true);
        List<Map<Integer, Integer>> fast = sampled(d.spec(), 1f, 500_000, n, upTo);
        Speculator.Counts c = d.spec().counts();
        assertThat(c.accepted()).as("guesses kept").isPositive();
        assertThat(c.accepted()).as("and guesses rejected").isLessThan(c.draftTokens());
        for (int pos = 0; pos < upTo; pos++) {
            double[] t = homogeneity(plain.get(pos), fast.get(pos));
            assertThat(t[0])
                    .as("chi-square at position " + (pos + 1) + " (df " + t[1] + ")")
                    .isLessThan(t[2]);
        }
    }

    @Test
    void aDraftWhoseQIsTheTargetsPKeepsEveryGuess() throws Exception {
        // the same fake model as draft: q = p row by row, so min(1, p/q) = 1; by equal draws (point-mass guesses of
        // the same model) the kept share is what a draw of p repeats the argmax, about half here
        Draft q = Draft.of(periodic(), 4, 16, 2048, true);
        sampled(q.spec(), 1f, 7, 200, 8);
        Speculator.Counts c = q.spec().counts();
        assertThat(c.draftTokens()).isPositive();
        assertThat(c.accepted()).isEqualTo(c.draftTokens());
        Draft greedy = Draft.of(periodic(), 4, 16, 2048, false);
        sampled(greedy.spec(), 1f, 7, 200, 8);
        Speculator.Counts g = greedy.spec().counts();
        assertThat((double) g.accepted() / g.draftTokens()).isBetween(0.2, 0.8);
    }

    /**
     * Two-sample chi-square (homogeneity) of counts {@code a} and {@code b}, cells expected under 5 times in either
     * sample pooled (spec_compare.py's): {statistic, degrees of freedom, critical value at p = 1e-4}.
     */
    static double[] homogeneity(Map<Integer, Integer> a, Map<Integer, Integer> b) {
        double na = a.values().stream().mapToInt(Integer::intValue).sum();
        double nb = b.values().stream().mapToInt(Integer::intValue).sum();
        java.util.TreeSet<Integer> keys = new java.util.TreeSet<>(a.keySet());
        keys.addAll(b.keySet());
        List<double[]> cells = new ArrayList<>();
        double poolA = 0;
        double poolB = 0;
        for (int key : keys) {
            double x = a.getOrDefault(key, 0);
            double y = b.getOrDefault(key, 0);
            double tot = x + y;
            if (tot * na / (na + nb) < 5 || tot * nb / (na + nb) < 5) {
                poolA += x;
                poolB += y;
            } else {
                cells.add(new double[] {x, y});
            }
        }
        if (poolA + poolB > 0) {
            cells.add(new double[] {poolA, poolB});
        }
        double stat = 0;
        for (double[] cell : cells) {
            double tot = cell[0] + cell[1];
            double ea = tot * na / (na + nb);
            double eb = tot * nb / (na + nb);
            stat += (cell[0] - ea) * (cell[0] - ea) / ea + (cell[1] - eb) * (cell[1] - eb) / eb;
        }
        int df = Math.max(1, cells.size() - 1);
        return new double[] {stat, df, SpecRuleTest.chiSquareCritical(df)};
    }
}
