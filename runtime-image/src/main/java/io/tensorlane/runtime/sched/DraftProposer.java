package io.tensorlane.runtime.sched;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Guesses by a draft model (issue 34, item 2b): a smaller model with the target's tokenizer, run through its own {@link
 * StepExecutor} with its own paged KV cache ({@code blocks}), proposes the next k tokens of a sequence greedily, one
 * draft step per guess. Greedy guesses are point masses, so the scheduler's accept-while-equal rule ({@link
 * SpecRule#acceptWhileEqual}) keeps the target's output distribution for sampled requests too, as with n-gram guesses:
 * with q the point mass at the guess d, the rejection rule accepts with probability p(d) and otherwise draws from p
 * without d, which is what "draw from p, keep the guess iff the draw equals it" does. With {@code sampled}, a request
 * that samples by temperature alone gets guesses drawn from the draft's own distributions q instead ({@link
 * Session#proposeSampled}: its draft steps return their logits), which the scheduler verifies by the rejection rule
 * ({@link SpecSampling}, on the host from the verify rows' logits), accepting each with min(1, p/q): more often than
 * equal draws at temperature > 0, at the same output distribution.
 *
 * <p>Each sequence's {@link Session} keeps the draft's KV cache of the tokens it has fed (the sequence's tokens, then its
 * own guesses). At the next call the sequence has grown by the accepted guesses and the target's token: the session
 * feeds the draft only the tokens past the longest prefix the two agree on (the positions past it are overwritten,
 * being position-addressed, and the blocks past the fed tokens given back), so after a verify step the draft's cache
 * holds exactly the accepted tokens, and a step costs the draft one short chunk (the target's token, and the last guess
 * when all k were kept) and k - 1 one-token steps. A chunk of at most {@code allRows} tokens asks logits for every token
 * (and reads the last): that is the shape the engine replays from a CUDA graph, like its one-token steps. While the
 * target prefills, {@link Session#prepare} feeds the prompt a chunk per call. The session's blocks go back when the
 * sequence ends or is preempted ({@link Session#close}; a preempted sequence's next session feeds its tokens again, so
 * neither preemption nor the target's prefix cache can leave the draft's cache out of step with the target's). When
 * the draft's cache has no room the session proposes nothing that step. A guess at an id the target's vocabulary lacks
 * ({@code vocabLimit}: a draft whose embedding table is padded further) ends the guesses there; a sequence with an id
 * the draft's vocabulary lacks (a target padded further) gets no guesses.
 *
 * <p>One sequence per draft step (batch 1, the case speculation is for): with B sequences speculating, a step costs
 * B x k draft steps; batching the draft steps of several sequences is a later slice.
 */
public final class DraftProposer implements Proposer {
    /** {@code DraftSession.catchUp}'s answer when no guess can be made. */
    private static final int NO_GUESS = Integer.MIN_VALUE;

    private final StepExecutor draft;
    private final BlockAllocator blocks;
    private final int maxChunk;
    private final int maxBlocksPerSeq;
    private final int allRows;
    private final int vocabLimit;
    private final boolean sampled;
    private final java.util.concurrent.atomic.AtomicLong steps = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();

    /** A proposer whose chunks ask logits for their last token only, guessing any id of the draft's vocabulary. */
    public DraftProposer(StepExecutor draft, BlockAllocator blocks, int maxChunk, int maxBlocksPerSeq) {
        this(draft, blocks, maxChunk, maxBlocksPerSeq, 1, draft.vocabSize(), false);
    }

    /**
     * @param draft           the draft model's steps (greedy rows: the builder's default)
     * @param blocks          the draft's KV cache
     * @param maxChunk        the most tokens of one draft step (its prefill chunk budget)
     * @param maxBlocksPerSeq the draft's block-table width
     * @param allRows         chunks of up to this many tokens that need a next token ask logits for every token (the
     *                        shape of the engine's captured graphs; at most the draft's logits rows), longer ones for
     *                        their last
     * @param vocabLimit      guesses are ids below this (the target's vocabulary size)
     * @param sampled         requests sampling by temperature alone get guesses drawn from the draft's own
     *                        distributions ({@link Session#proposeSampled}; its steps then return their logits), verified
     *                        by the rejection rule ({@link SpecSampling}); false: greedy guesses for every request
     */
    public DraftProposer(
            StepExecutor draft,
            BlockAllocator blocks,
            int maxChunk,
            int maxBlocksPerSeq,
            int allRows,
            int vocabLimit,
            boolean sampled) {
        if (maxChunk < 1 || maxBlocksPerSeq < 1 || allRows < 1 || vocabLimit < 1) {
            throw new IllegalArgumentException("draft proposer: maxChunk (" + maxChunk + "), maxBlocksPerSeq ("
                    + maxBlocksPerSeq + "), allRows (" + allRows + ") and vocabLimit (" + vocabLimit
                    + ") must be >= 1");
        }
        this.allRows = allRows;
        this.vocabLimit = vocabLimit;
        this.sampled = sampled;
        this.draft = java.util.Objects.requireNonNull(draft, "draft");
        this.blocks = java.util.Objects.requireNonNull(blocks, "blocks");
        this.maxChunk = maxChunk;
        this.maxBlocksPerSeq = maxBlocksPerSeq;
    }

    @Override
    public Session open(int capacity) {
        return new DraftSession(capacity);
    }

    /** Draft steps run so far and their wall time in seconds (the host's, sessions' bookkeeping included). */
    public record Work(long steps, double seconds) {}

    public Work work() {
        return new Work(steps.get(), nanos.get() / 1e9);
    }

    /** One sequence's draft KV cache and the tokens it holds. */
    private final class DraftSession implements Session {
        private final List<Integer> table = new ArrayList<>();
        /** The tokens whose KV the draft's cache holds, in order ({@code fed} of them). */
        private int[] known;

        private int fed;
        /** The draft's logits of the next token after the last step fed with rows ({@link #proposeSampled}). */
        private float[] lastRow;

        DraftSession(int capacity) {
            known = new int[Math.max(16, capacity)];
        }

        @Override
        public void prepare(int[] tokens, int length) {
            int from = agreed(tokens, length);
            int end = Math.min(length - 1, from + maxChunk); // the last token is fed by propose, for its logits
            if (end > from && known(tokens, from, end) && room(end)) {
                feed(tokens, from, end - from, false);
            }
        }

        @Override
        public int propose(int[] tokens, int length, int k, int[] out) {
            int from = catchUpTo(tokens, length, k);
            if (from == NO_GUESS) {
                return 0;
            }
            // the last chunk (the target's token, and the last guess when all k were kept), then k - 1 one-token
            // steps, each fed the guess before: one chain (StepExecutor#chain), read back once on the GPU engine
            int n = length - from;
            int[] chunk = Arrays.copyOfRange(tokens, from, length);
            long t0 = System.nanoTime();
            int[] ids = draft.chain(
                    batch(chunk, from, true), k - 1, (id, j) -> batch(new int[] {id}, length - 1 + j, true));
            nanos.addAndGet(System.nanoTime() - t0);
            steps.addAndGet(k);
            remember(chunk, from, n);
            for (int j = 0; j + 1 < k; j++) {
                remember(new int[] {ids[j]}, length + j, 1);
            }
            for (int i = 0; i < k; i++) {
                if (ids[i] < 0 || ids[i] >= vocabLimit) {
                    return i; // an id the target cannot take: no guesses from here
                }
                out[i] = ids[i];
            }
            return k;
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
            if (!sampled) {
                return -1;
            }
            if (catchUp(tokens, length, k, true) == NO_GUESS) {
                return 0;
            }
            int limit = Math.min(Math.min(draft.vocabSize(), vocabLimit), vocab);
            for (int i = 0; i < k; i++) {
                SpecSampling.probabilities(lastRow, 0, limit, temperature, q, i * vocab, vocab);
                out[i] = SpecSampling.draw(q, i * vocab, vocab, rng.nextDouble());
                if (i + 1 < k) {
                    feed(out, i, 1, true, length + i, true);
                }
            }
            return k;
        }

        /**
         * Feeds the draft {@code tokens[agreed, length)} in chunks, so that its next step follows {@code tokens[length -
         * 1]}: the greedy next id after them (with {@code rows}, that token's logits in {@link #lastRow}), or {@link
         * #NO_GUESS} when no guess can be made (nothing to guess from, an id the draft lacks, no KV room for k more).
         */
        private int catchUp(int[] tokens, int length, int k, boolean rows) {
            int from = catchUpTo(tokens, length, k);
            if (from == NO_GUESS) {
                return NO_GUESS;
            }
            return feed(tokens, from, length - from, true, from, rows);
        }

        /**
         * Feeds the draft {@code tokens[agreed, length)} in chunks but the last, which it leaves to the caller (it needs
         * logits): that chunk's start, at most {@code maxChunk} before {@code length}; or {@link #NO_GUESS} as {@link
         * #catchUp} says.
         */
        private int catchUpTo(int[] tokens, int length, int k) {
            if (length < 1 || k < 1) {
                return NO_GUESS;
            }
            int from = agreed(tokens, length);
            if (!known(tokens, from, length) || !room(length + k - 1L)) {
                return NO_GUESS;
            }
            while (length - from > maxChunk) {
                feed(tokens, from, maxChunk, false, from, false);
                from += maxChunk;
            }
            return from;
        }

        @Override
        public void close() {
            blocks.release(table);
            fed = 0;
        }

        /**
         * The tokens of {@code tokens[0, length)} the cache holds: the longest prefix they share with {@link #known},
         * at most {@code length - 1} (the last token is fed again for its logits); the cache is cut to it.
         */
        private int agreed(int[] tokens, int length) {
            int limit = Math.min(fed, length - 1);
            int v = 0;
            while (v < limit && known[v] == tokens[v]) {
                v++;
            }
            fed = Math.max(0, v);
            blocks.truncate(table, fed);
            return fed;
        }

        /** Whether the draft's vocabulary has every id of {@code tokens[from, to)} (the target's may be larger). */
        private boolean known(int[] tokens, int from, int to) {
            int v = draft.vocabSize();
            for (int i = from; i < to; i++) {
                if (tokens[i] < 0 || tokens[i] >= v) {
                    return false;
                }
            }
            return true;
        }

        /** Whether the table covers (or could be grown to) {@code tokens} tokens; grows it. */
        private boolean room(long tokens) {
            return tokens <= (long) maxBlocksPerSeq * blocks.blockSize() && blocks.ensure(table, tokens);
        }

        private int feed(int[] src, int from, int n, boolean logits) {
            return feed(src, from, n, logits, from, false);
        }

        private int feed(int[] src, int from, int n, boolean logits, int pos) {
            return feed(src, from, n, logits, pos, false);
        }

        /**
         * One draft step of {@code src[from, from + n)} at positions {@code pos, ...} (= {@link #fed}); the greedy next
         * token after them when {@code logits}, else -1; with {@code rows}, the logits of that next token in {@link
         * #lastRow}.
         */
        private int feed(int[] src, int from, int n, boolean logits, int pos, boolean rows) {
            if (pos != fed) {
                throw new IllegalStateException("draft fed " + fed + " tokens, asked to write position " + pos);
            }
            int[] chunk = Arrays.copyOfRange(src, from, from + n);
            long t0 = System.nanoTime();
            StepResult r = draft.step(batch(chunk, pos, logits), logits && rows);
            nanos.addAndGet(System.nanoTime() - t0);
            steps.incrementAndGet();
            if (logits && rows) {
                int v = draft.vocabSize();
                int m = r.ids().length;
                lastRow = Arrays.copyOfRange(r.logits(), (m - 1) * v, m * v);
            }
            remember(chunk, pos, n);
            return logits ? r.ids()[r.ids().length - 1] : -1;
        }

        /** A draft step of {@code chunk} at positions {@code pos, ...}; with {@code logits}, the next id asked for. */
        private StepBatch batch(int[] chunk, int pos, boolean logits) {
            int n = chunk.length;
            StepBatch.Logits want =
                    !logits ? StepBatch.Logits.NONE : n <= allRows ? StepBatch.Logits.ALL : StepBatch.Logits.LAST;
            return new StepBatch.Builder(blocks.blockSize(), maxBlocksPerSeq)
                    .add(table, chunk, pos, want)
                    .build();
        }

        /** The draft's cache now holds {@code chunk} at positions {@code pos, ...} (= {@link #fed}). */
        private void remember(int[] chunk, int pos, int n) {
            if (pos != fed) {
                throw new IllegalStateException("draft fed " + fed + " tokens, asked to write position " + pos);
            }
            if (known.length < pos + n) {
                known = Arrays.copyOf(known, Math.max(pos + n, 2 * known.length));
            }
            System.arraycopy(chunk, 0, known, pos, n);
            fed = pos + n;
        }
    }
}
