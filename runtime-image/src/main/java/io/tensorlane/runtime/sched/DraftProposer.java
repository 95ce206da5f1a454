package io.tensorlane.runtime.sched;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Guesses by a draft model (issue 34, item 2b; first slice): a smaller model with the target's tokenizer, run through
 * its own {@link StepExecutor} with its own paged KV cache ({@code blocks}), proposes the next k tokens of a sequence
 * greedily, one draft step per guess. Greedy guesses are point masses, so the scheduler's accept-while-equal rule
 * ({@link SpecRule#acceptWhileEqual}) keeps the target's output distribution for sampled requests too, as with n-gram
 * guesses.
 *
 * <p>Each sequence's {@link Session} keeps the draft's KV cache of the tokens it has fed (the sequence's tokens, then its
 * own guesses). At the next call the sequence has grown by the accepted guesses and the target's token: the session
 * feeds the draft only the tokens past the longest prefix the two agree on (the positions past it are overwritten,
 * being position-addressed, and the blocks past the fed tokens given back), so a step costs the draft one short chunk
 * and k - 1 one-token steps. While the target prefills, {@link Session#prepare} feeds the prompt a chunk per call. The
 * session's blocks go back when the sequence ends ({@link Session#close}). When the draft's cache has no room the
 * session proposes nothing that step.
 *
 * <p>This slice runs one sequence per draft step (batch 1, the case speculation is for); batching the draft steps of
 * several sequences, and building the draft engine beside the target ({@code draft:DIR,k=4}, which {@link
 * SpeculativeConfig#parse} still refuses), are the next ones.
 */
public final class DraftProposer implements Proposer {
    private final StepExecutor draft;
    private final BlockAllocator blocks;
    private final int maxChunk;
    private final int maxBlocksPerSeq;

    /**
     * @param draft           the draft model's steps (greedy rows: the builder's default)
     * @param blocks          the draft's KV cache
     * @param maxChunk        the most tokens of one draft step (its prefill chunk budget)
     * @param maxBlocksPerSeq the draft's block-table width
     */
    public DraftProposer(StepExecutor draft, BlockAllocator blocks, int maxChunk, int maxBlocksPerSeq) {
        if (maxChunk < 1 || maxBlocksPerSeq < 1) {
            throw new IllegalArgumentException("draft proposer: maxChunk (" + maxChunk + ") and maxBlocksPerSeq ("
                    + maxBlocksPerSeq + ") must be >= 1");
        }
        this.draft = java.util.Objects.requireNonNull(draft, "draft");
        this.blocks = java.util.Objects.requireNonNull(blocks, "blocks");
        this.maxChunk = maxChunk;
        this.maxBlocksPerSeq = maxBlocksPerSeq;
    }

    @Override
    public Session open(int capacity) {
        return new DraftSession(capacity);
    }

    /** One sequence's draft KV cache and the tokens it holds. */
    private final class DraftSession implements Session {
        private final List<Integer> table = new ArrayList<>();
        /** The tokens whose KV the draft's cache holds, in order ({@code fed} of them). */
        private int[] known;

        private int fed;

        DraftSession(int capacity) {
            known = new int[Math.max(16, capacity)];
        }

        @Override
        public void prepare(int[] tokens, int length) {
            int from = agreed(tokens, length);
            int end = Math.min(length - 1, from + maxChunk); // the last token is fed by propose, for its logits
            if (end > from && room(end)) {
                feed(tokens, from, end - from, false);
            }
        }

        @Override
        public int propose(int[] tokens, int length, int k, int[] out) {
            if (length < 1 || k < 1) {
                return 0;
            }
            int from = agreed(tokens, length);
            if (!room(length + k - 1L)) {
                return 0;
            }
            while (from < length) {
                int n = Math.min(maxChunk, length - from);
                int id = feed(tokens, from, n, from + n == length);
                from += n;
                if (from == length) {
                    out[0] = id;
                }
            }
            for (int i = 1; i < k; i++) {
                out[i] = feed(out, i - 1, 1, true, length + i - 1);
            }
            return k;
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

        /** Whether the table covers (or could be grown to) {@code tokens} tokens; grows it. */
        private boolean room(long tokens) {
            return tokens <= (long) maxBlocksPerSeq * blocks.blockSize() && blocks.ensure(table, tokens);
        }

        private int feed(int[] src, int from, int n, boolean logits) {
            return feed(src, from, n, logits, from);
        }

        /**
         * One draft step of {@code src[from, from + n)} at positions {@code pos, ...} (= {@link #fed}); the greedy next
         * token after them when {@code logits}, else -1.
         */
        private int feed(int[] src, int from, int n, boolean logits, int pos) {
            if (pos != fed) {
                throw new IllegalStateException("draft fed " + fed + " tokens, asked to write position " + pos);
            }
            int[] chunk = Arrays.copyOfRange(src, from, from + n);
            StepBatch b = new StepBatch.Builder(blocks.blockSize(), maxBlocksPerSeq)
                    .add(table, chunk, pos, logits ? StepBatch.Logits.LAST : StepBatch.Logits.NONE)
                    .build();
            StepResult r = draft.step(b, false);
            if (known.length < pos + n) {
                known = Arrays.copyOf(known, Math.max(pos + n, 2 * known.length));
            }
            System.arraycopy(chunk, 0, known, pos, n);
            fed = pos + n;
            return logits ? r.ids()[0] : -1;
        }
    }
}
