package io.tensorlane.runtime.sched;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Picks the next step, in the manner of vLLM v1's scheduler (scheduler thread only):
 *
 * <ol>
 *   <li>every running sequence that is decoding gets its one token (oldest admitted first);
 *   <li>running sequences part-way through their prompt get chunks from what is left of the token budget;
 *   <li>waiting sequences (new, or preempted and to be recomputed) are admitted from the front of the queue while the
 *       budget, {@code maxSeqs} and free KV blocks allow; a prompt longer than the budget is chunked. A sequence first
 *       takes the longest cached prefix of its tokens from the {@link PrefixCache} and is fed only the rest; one whose
 *       next uncached block a running sequence is computing is passed over until that block is cached.
 * </ol>
 *
 * <p>KV blocks are taken as sequences grow. When a running sequence cannot get a block, the most recently admitted
 * running sequence not yet in this step is preempted (its references dropped, back to the front of the waiting queue,
 * recomputed later from what is still cached); if that is the sequence itself, it is the one preempted. No waiting sequence is admitted in a step that
 * preempted (as vLLM).
 */
final class BatchPlanner {
    /**
     * One sequence's part of a step: {@code n} tokens from {@code seq.computed}; {@code logitRow} >= 0 when it samples
     * (the first of {@code drafts + 1} rows); {@code drafts} > 0: a verify chunk, the last token and that many of
     * {@code seq.draft} ({@link Speculator}); {@code promptRow} >= 0: a prompt chunk with a logits row per token from
     * that row on ({@link PromptLogprobs}; its last is {@code logitRow} when the chunk ends the prompt).
     */
    record Entry(Sequence seq, int n, int logitRow, int drafts, int promptRow) {
        Entry(Sequence seq, int n, int logitRow) {
            this(seq, n, logitRow, 0, -1);
        }

        Entry(Sequence seq, int n, int logitRow, int drafts) {
            this(seq, n, logitRow, drafts, -1);
        }
    }

    /** A planned step; {@code admitted} are the sequences admitted for the first time. */
    record Plan(StepBatch batch, List<Entry> entries, boolean wantLogits, int preempted, List<Sequence> admitted) {
        boolean isEmpty() {
            return entries.isEmpty();
        }
    }

    interface PreemptionListener {
        void preempted(Sequence s);
    }

    private final BlockAllocator blocks;
    private final PrefixCache prefix;
    private final SchedulerConfig config;
    private final PreemptionListener onPreempt;

    BatchPlanner(BlockAllocator blocks, PrefixCache prefix, SchedulerConfig config, PreemptionListener onPreempt) {
        this.blocks = blocks;
        this.prefix = prefix;
        this.config = config;
        this.onPreempt = onPreempt;
    }

    /** Plans one step; moves sequences between {@code running} and {@code waiting} (admission, preemption). */
    Plan plan(List<Sequence> running, Deque<Sequence> waiting, long now) {
        int budget = config.maxBatchTokens();
        List<Entry> entries = new ArrayList<>();
        Set<Sequence> scheduled = Collections.newSetFromMap(new IdentityHashMap<>());
        int preempted = 0;
        // 1. decode tokens, 2. chunks of partly prefilled running sequences.
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < running.size() && budget > 0; i++) {
                Sequence s = running.get(i);
                boolean decode = s.need() == 1;
                if (decode != (pass == 0) || scheduled.contains(s)) {
                    continue;
                }
                int guesses = decode && s.draft != null ? s.draft.length : 0;
                int want = Math.min(s.need() + guesses, budget);
                int n;
                boolean selfPreempted = false;
                while ((n = grow(s, want)) == 0) {
                    Sequence victim = running.get(running.size() - 1);
                    if (scheduled.contains(victim)) {
                        break;
                    }
                    preempt(victim, running, waiting);
                    preempted++;
                    if (victim == s) {
                        selfPreempted = true;
                        break;
                    }
                }
                if (selfPreempted || n == 0) {
                    continue;
                }
                entries.add(new Entry(s, n, -1, decode ? Math.min(guesses, n - 1) : 0));
                scheduled.add(s);
                budget -= n;
            }
        }
        // 3. admissions, oldest first; a sequence waiting for a running one to compute its prefix is passed over.
        List<Sequence> admitted = new ArrayList<>();
        for (Iterator<Sequence> it = waiting.iterator();
                preempted == 0 && budget > 0 && running.size() < config.maxSeqs() && it.hasNext(); ) {
            Sequence s = it.next();
            boolean scores = PromptLogprobs.collecting(s); // reads nothing from the cache
            int cached = scores ? 0 : prefix.cachedBlocks(s);
            if (!scores && prefix.shouldWait(s, cached, running)) {
                continue;
            }
            prefix.take(s, cached);
            int n = grow(s, Math.min(s.need(), budget));
            if (n == 0) {
                prefix.release(s);
                break;
            }
            it.remove();
            running.add(s);
            if (s.admittedNanos < 0) {
                s.admittedNanos = now;
                s.cachedTokens = cached * blocks.blockSize();
                admitted.add(s);
            }
            entries.add(new Entry(s, n, -1));
            budget -= n;
        }
        return build(entries, preempted, admitted);
    }

    /** Takes blocks for up to {@code want} more tokens of {@code s}; returns how many tokens the table now covers. */
    private int grow(Sequence s, int want) {
        long room = (long) (s.table.size() + blocks.freeBlocks()) * blocks.blockSize() - s.computed;
        int n = (int) Math.min(want, room);
        if (n <= 0) {
            return 0;
        }
        if (!blocks.ensure(s.table, (long) s.computed + n)) {
            throw new IllegalStateException("KV blocks vanished while planning " + s);
        }
        return n;
    }

    private void preempt(Sequence victim, List<Sequence> running, Deque<Sequence> waiting) {
        running.remove(running.size() - 1);
        prefix.release(victim);
        Speculator.drop(victim); // its proposer's state too (a draft's KV blocks): fed again when it runs again
        victim.preemptions++;
        waiting.addFirst(victim);
        onPreempt.preempted(victim);
    }

    private Plan build(List<Entry> planned, int preempted, List<Sequence> admitted) {
        StepBatch.Builder b = new StepBatch.Builder(blocks.blockSize(), config.maxBlocksPerSeq());
        List<Entry> entries = new ArrayList<>(planned.size());
        int[] keep = promptChunks(planned);
        int row = 0;
        int scoring = 0;
        boolean wantLogits = false;
        for (Entry e : planned) {
            Sequence s = e.seq();
            int d = e.drafts();
            boolean scores = d == 0 && PromptLogprobs.collecting(s);
            int n = scores ? keep[scoring++] : e.n();
            boolean samples = d > 0 || s.computed + n == s.length;
            int[] chunk = Arrays.copyOfRange(s.tokens, s.computed, s.computed + n);
            if (d > 0) { // a verify chunk: the last token, then the guesses (the sequence has no constraint)
                System.arraycopy(s.draft, 0, chunk, 1, d);
                b.add(s.table, chunk, s.computed, StepBatch.Logits.ALL);
                b.sampleLast(d + 1, s.req.sampling(), s.generated);
            } else if (scores) { // a row per token; the last one draws when the chunk ends the prompt
                b.add(s.table, chunk, s.computed, StepBatch.Logits.ALL);
            } else {
                b.add(s.table, chunk, s.computed, samples ? StepBatch.Logits.LAST : StepBatch.Logits.NONE);
            }
            if (samples && d == 0) {
                b.sample(s.req.sampling(), s.generated);
                if (s.req.constraint() != null) {
                    b.mask(s.req.constraint().mask(s.tokens, s.req.promptIds().length, s.generated));
                }
                if (s.penalties != null) {
                    b.penalty(s.penalties.row(s.tokens, s.generated));
                }
            }
            if (scores) {
                entries.add(new Entry(s, n, samples ? row + n - 1 : -1, 0, row));
                row += n;
                wantLogits = true;
                continue;
            }
            entries.add(new Entry(s, e.n(), samples ? row : -1, d));
            row += samples ? d + 1 : 0;
            wantLogits |= samples && (s.req.needsLogits() || (d > 0 && s.draftQ != null)); // q's rule reads p
        }
        return new Plan(entries.isEmpty() ? null : b.build(), entries, wantLogits, preempted, admitted);
    }

    /** The tokens each prompt-logprob chunk keeps ({@link PromptLogprobs#fit}), in the order of {@code planned}. */
    private int[] promptChunks(List<Entry> planned) {
        int others = 0;
        int[] want = new int[planned.size()];
        int k = 0;
        for (Entry e : planned) {
            Sequence s = e.seq();
            if (e.drafts() == 0 && PromptLogprobs.collecting(s)) {
                want[k++] = e.n();
            } else {
                others += e.drafts() > 0 ? e.drafts() + 1 : s.computed + e.n() == s.length ? 1 : 0;
            }
        }
        return PromptLogprobs.fit(Arrays.copyOf(want, k), others, config.maxLogitRows());
    }
}
