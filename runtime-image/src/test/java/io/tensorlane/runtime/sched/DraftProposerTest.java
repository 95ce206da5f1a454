package io.tensorlane.runtime.sched;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.text.SamplingParams;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.function.ToIntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link DraftProposer} over a CPU draft model ({@link SpecTarget}: a real fake paged KV cache, so a wrong slot, a stale
 * block or a bad rollback of the draft's cache changes its guesses or fails its position check): its guesses are the
 * draft's greedy chain, each call feeds only the tokens past what the cache agrees on, its blocks go back; and the
 * scheduler with it gives the same tokens as without speculation.
 */
@Timeout(30)
class DraftProposerTest {
    static final int VOCAB = SpecSchedulerTest.VOCAB;
    static final int BS = 4;
    static final int DRAFT_BLOCKS = 128;
    static final int TABLE = 64;

    final List<Scheduler> open = new ArrayList<>();

    @AfterEach
    void closeAll() {
        open.forEach(Scheduler::close);
    }

    static ToIntFunction<int[]> periodic() {
        return ctx -> SpecTarget.periodic(ctx, VOCAB);
    }

    /** The draft's greedy chain: k tokens after {@code ctx}. */
    static int[] chain(ToIntFunction<int[]> rule, int[] ctx, int k) {
        int[] c = ctx.clone();
        int[] out = new int[k];
        for (int i = 0; i < k; i++) {
            out[i] = rule.applyAsInt(c);
            c = Arrays.copyOf(c, c.length + 1);
            c[c.length - 1] = out[i];
        }
        return out;
    }

    static int[] concat(int[] a, int... b) {
        int[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    @Test
    void guessesAreTheDraftsChainAndOnlyNewTokensAreFed() {
        SpecTarget draft = new SpecTarget(VOCAB, DRAFT_BLOCKS, BS, periodic());
        BlockAllocator blocks = new BlockAllocator(DRAFT_BLOCKS, BS);
        Proposer.Session s = new DraftProposer(draft, blocks, 8, TABLE).open(200);
        int[] prompt = SpecSchedulerTest.repetitive(19, 5);

        int[] g = new int[4];
        assertThat(s.propose(prompt, prompt.length, 4, g)).isEqualTo(4);
        assertThat(g).containsExactly(chain(periodic(), prompt, 4));
        // the prompt in chunks of at most 8 (8, 8, 3), then one step per guess but the last
        assertThat(draft.batches).extracting(StepBatch::tokens).containsExactly(8, 8, 3, 1, 1, 1);

        // the target kept 2 guesses and said its own token: the cache holds the kept guesses (the first three were
        // fed; the third is wrong now), so the draft is fed the target's token alone, at its position
        int[] next = concat(prompt, g[0], g[1], 17);
        draft.batches.clear();
        int[] h = new int[3];
        assertThat(s.propose(next, next.length, 3, h)).isEqualTo(3);
        assertThat(h).containsExactly(chain(periodic(), next, 3));
        assertThat(draft.batches.get(0).tokenIds()).containsExactly(17);
        assertThat(draft.batches.get(0).positions()).containsExactly(next.length - 1);
        assertThat(draft.batches).extracting(StepBatch::tokens).containsExactly(1, 1, 1);

        // every guess kept, then the target's token: the last guess (never fed) and the new token
        int[] all = concat(next, h[0], h[1], h[2], 40);
        draft.batches.clear();
        int[] one = new int[1];
        assertThat(s.propose(all, all.length, 1, one)).isEqualTo(1);
        assertThat(one).containsExactly(chain(periodic(), all, 1));
        assertThat(draft.batches).hasSize(1);
        assertThat(draft.batches.get(0).tokenIds()).containsExactly(h[2], 40);
        assertThat(draft.batches.get(0).positions()).containsExactly(all.length - 2, all.length - 1);

        // a cut (the sequence shorter than what was fed, e.g. a stop inside an accepted run) is fed again from there
        int[] cut = Arrays.copyOf(all, 23);
        draft.batches.clear();
        assertThat(s.propose(cut, cut.length, 2, new int[2])).isEqualTo(2);
        assertThat(draft.batches.get(0).tokenIds()).containsExactly(cut[22]);
        assertThat(draft.batches.get(0).positions()).containsExactly(22);

        // and grown again past the cut with other tokens than the draft's guess there: fed from the first difference
        int[] c2 = new int[2];
        draft.batches.clear();
        Proposer.Session fresh = new DraftProposer(draft, new BlockAllocator(DRAFT_BLOCKS, BS), 8, TABLE).open(200);
        fresh.propose(cut, cut.length, 1, c2);
        int other = (c2[0] + 1) % (VOCAB - 1);
        int[] regrown = concat(cut, other, 5, 6);
        draft.batches.clear();
        assertThat(s.propose(regrown, regrown.length, 2, c2)).isEqualTo(2);
        assertThat(c2).containsExactly(chain(periodic(), regrown, 2));
        assertThat(draft.batches.get(0).tokenIds()).containsExactly(other, 5, 6);
        assertThat(draft.batches.get(0).positions()).containsExactly(23, 24, 25);
        fresh.close();

        assertThat(blocks.freeBlocks()).isEqualTo(DRAFT_BLOCKS - blocks.blocksFor(27));
        s.close();
        assertThat(blocks.freeBlocks()).isEqualTo(DRAFT_BLOCKS);
    }

    /**
     * A draft that runs its chains as the GPU engine does (ChainedSteps): it does not ask for the follow-up steps but
     * works them out from the first step's block table, as tl_chain_advance_i32 does, and checks them against the
     * proposer's own ({@code next}).
     */
    static final class ChainingDraft implements StepExecutor {
        final SpecTarget inner;
        int chains;

        ChainingDraft(SpecTarget inner) {
            this.inner = inner;
        }

        @Override
        public StepResult step(StepBatch batch, boolean wantLogits) {
            return inner.step(batch, wantLogits);
        }

        @Override
        public int vocabSize() {
            return inner.vocabSize();
        }

        @Override
        public int[] chain(StepBatch first, int more, ChainStep next) {
            chains++;
            assertThat(first.rows()).isEqualTo(1);
            int[] ids = new int[more + 1];
            int[] r = step(first, false).ids();
            ids[0] = r[r.length - 1];
            int pos = first.positions()[first.tokens() - 1];
            for (int j = 1; j <= more; j++) {
                pos++;
                int slot = first.blockTables()[pos / BS] * BS + pos % BS; // row 0's table, the kernel's rule
                StepBatch b = next.batch(ids[j - 1], j);
                assertThat(b.tokenIds()).containsExactly(ids[j - 1]);
                assertThat(b.positions()).containsExactly(pos);
                assertThat(b.slots()).containsExactly(slot);
                assertThat(b.tokenRow()).containsExactly(0);
                assertThat(b.logitTokens()).containsExactly(0);
                assertThat(Arrays.copyOf(b.blockTables(), TABLE))
                        .containsExactly(Arrays.copyOf(first.blockTables(), TABLE));
                int[] s = step(b, false).ids();
                ids[j] = s[s.length - 1];
            }
            return ids;
        }
    }

    @Test
    void aChainedDraftGivesTheGuessesAndTheCacheOfOneStepAtATime() {
        SpecTarget plain = new SpecTarget(VOCAB, DRAFT_BLOCKS, BS, periodic());
        ChainingDraft chained = new ChainingDraft(new SpecTarget(VOCAB, DRAFT_BLOCKS, BS, periodic()));
        Proposer.Session a = new DraftProposer(plain, new BlockAllocator(DRAFT_BLOCKS, BS), 8, TABLE).open(200);
        Proposer.Session b = new DraftProposer(chained, new BlockAllocator(DRAFT_BLOCKS, BS), 8, TABLE).open(200);
        int[] seq = SpecSchedulerTest.repetitive(19, 5);
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(3);
        for (int round = 0; round < 40; round++) {
            int k = 1 + rnd.nextInt(6);
            int[] ga = new int[k];
            int[] gb = new int[k];
            int na = a.propose(seq, seq.length, k, ga);
            assertThat(b.propose(seq, seq.length, k, gb)).isEqualTo(na);
            assertThat(gb).containsExactly(ga);
            // the target keeps some guesses, then its own token (sometimes a guess's, sometimes another)
            int keep = rnd.nextInt(na + 1);
            int[] kept = Arrays.copyOf(ga, keep);
            seq = concat(seq, kept);
            seq = concat(seq, rnd.nextInt(3) == 0 ? rnd.nextInt(VOCAB - 1) : chain(periodic(), seq, 1)[0]);
        }
        assertThat(chained.chains).as("every proposal one chain").isEqualTo(40);
        assertThat(chained.inner.batches)
                .as("the same draft steps, in the same order")
                .extracting(x -> Arrays.toString(x.tokenIds()) + "@" + Arrays.toString(x.positions()) + "/"
                        + Arrays.toString(x.slots()))
                .containsExactlyElementsOf(plain.batches.stream()
                        .map(x -> Arrays.toString(x.tokenIds()) + "@" + Arrays.toString(x.positions()) + "/"
                                + Arrays.toString(x.slots()))
                        .toList());
    }

    @Test
    void prepareFeedsThePromptAChunkPerCallAndKeepsTheLastToken() {
        SpecTarget draft = new SpecTarget(VOCAB, DRAFT_BLOCKS, BS, periodic());
        BlockAllocator blocks = new BlockAllocator(DRAFT_BLOCKS, BS);
        DraftProposer proposer = new DraftProposer(draft, blocks, 8, TABLE);
        Proposer.Session s = proposer.open(100);
        int[] prompt = SpecSchedulerTest.repetitive(13, 2);
        s.prepare(prompt, prompt.length);
        s.prepare(prompt, prompt.length);
        s.prepare(prompt, prompt.length); // nothing left but the last token
        assertThat(draft.batches).extracting(StepBatch::tokens).containsExactly(8, 4);
        assertThat(draft.batches).allSatisfy(b -> assertThat(b.logitTokens()).isEmpty());
        int[] out = new int[2];
        assertThat(s.propose(prompt, prompt.length, 2, out)).isEqualTo(2);
        assertThat(out).containsExactly(chain(periodic(), prompt, 2));
        assertThat(draft.batches.get(2).tokenIds()).containsExactly(prompt[12]);
        assertThat(proposer.work().steps()).as("every draft step counted").isEqualTo(draft.batches.size());
        assertThat(proposer.work().seconds()).isPositive();
    }

    @Test
    void noRoomInTheDraftsCacheMeansNoGuess() {
        SpecTarget draft = new SpecTarget(VOCAB, 4, BS, periodic());
        BlockAllocator blocks = new BlockAllocator(4, BS); // 16 tokens
        Proposer.Session s = new DraftProposer(draft, blocks, 8, TABLE).open(100);
        int[] out = new int[4];
        int[] p = SpecSchedulerTest.repetitive(14, 0);
        assertThat(s.propose(p, p.length, 4, out)).isZero(); // 14 + 3 tokens do not fit
        assertThat(draft.batches).isEmpty();
        assertThat(s.propose(p, p.length, 3, out)).isEqualTo(3);
        s.close();
        assertThat(blocks.freeBlocks()).isEqualTo(4);
    }

    /** The scheduler over a target that follows {@code targetRule}, with a draft that follows {@code draftRule}. */
    List<Collector> run(SpecTarget target, Speculator spec, List<SeqRequest> reqs) throws Exception {
        BlockAllocator blocks = new BlockAllocator(SpecSchedulerTest.KV_BLOCKS, BS);
        SchedulerConfig config = new SchedulerConfig(4, 64, 100, 512, 128).withPrefixCaching(true, "draft-test");
        Scheduler s = new Scheduler(target, blocks, config, Set.of(SpecSchedulerTest.EOS), null, spec);
        open.add(s);
        List<Collector> cs = new ArrayList<>();
        for (SeqRequest r : reqs) {
            Collector c = new Collector();
            cs.add(c);
            s.submit(r, c, true);
        }
        for (Collector c : cs) {
            c.await();
        }
        assertThat(s.awaitIdle(Duration.ofSeconds(5))).isTrue();
        assertThat(blocks.freeBlocks()).isEqualTo(SpecSchedulerTest.KV_BLOCKS);
        return cs;
    }

    static List<SeqRequest> requests(SamplingParams p) {
        List<SeqRequest> reqs = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            int[] prompt = SpecSchedulerTest.repetitive(9 + 5 * i, 7 * i);
            reqs.add(new SeqRequest("r" + i, prompt, 20 + 9 * i, p, Set.of(), true, 0));
        }
        return reqs;
    }

    @ParameterizedTest(name = "draft {0}, k={1}, seed {2}")
    @CsvSource({"same,4,-1", "same,8,-1", "unseen,4,-1", "same,4,5", "unseen,3,6"})
    void theSchedulerWithADraftGivesTheTokensOfThePlainRun(String draftRule, int k, long seed) throws Exception {
        SamplingParams p = seed < 0 ? SamplingParams.greedy() : new SamplingParams(1f, 1f, 0, 0f, seed);
        SpecTarget plainTarget = new SpecTarget(VOCAB, SpecSchedulerTest.KV_BLOCKS, BS, periodic());
        List<Collector> plain = run(plainTarget, null, requests(p));

        ToIntFunction<int[]> dr = draftRule.equals("same") ? periodic() : SpecTarget::unseen;
        SpecTarget draft = new SpecTarget(VOCAB, DRAFT_BLOCKS * 4, BS, dr);
        BlockAllocator draftBlocks = new BlockAllocator(DRAFT_BLOCKS * 4, BS);
        SpeculativeConfig sc =
                new SpeculativeConfig(SpeculativeConfig.Method.DRAFT, k, 1, java.nio.file.Path.of("draft"), 0);
        Speculator spec = new Speculator(sc, new DraftProposer(draft, draftBlocks, 16, TABLE), 4 * (k + 1), 4, null);
        SpecTarget target = new SpecTarget(VOCAB, SpecSchedulerTest.KV_BLOCKS, BS, periodic());
        List<Collector> fast = run(target, spec, requests(p));

        for (int i = 0; i < plain.size(); i++) {
            assertThat(fast.get(i).ids())
                    .as("request " + i)
                    .containsExactly(plain.get(i).ids());
        }
        Speculator.Counts c = spec.counts();
        assertThat(c.drafts()).isPositive();
        if (draftRule.equals("same") && seed < 0) { // the draft is the target: every greedy guess is right
            assertThat(c.accepted()).isEqualTo(c.draftTokens());
            assertThat(target.batches.size()).isLessThan(plainTarget.batches.size());
        }
        assertThat(draftBlocks.freeBlocks())
                .as("the draft's blocks are given back")
                .isEqualTo(DRAFT_BLOCKS * 4);
    }
}
