package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.sched.StepBatch;

/**
 * Which captured CUDA graph a step replays ({@link StepRunner}): a pure decision over the step's shape. A graph is
 * captured for a number of tokens n, each with a logits row of its own (m = n), every token on the split-key attention
 * kernel (no query tiles: every sequence's chunk shorter than {@link AttentionPlan#MIN_RUN}). The kernels read the
 * tokens' rows, positions, KV slots, block tables and logits rows from device buffers, and the key slices of the
 * split-key kernel are a function of n alone ({@link AttentionKernels#splits}), so one graph serves every step of that
 * shape as its sequences grow: plain decode steps (one token per sequence) and speculative verify steps (the last token
 * and up to k guesses per sequence, causal by position within the step) alike, and short prompt chunks with logits
 * for every token (a prompt-logits dump's).
 *
 * <p>The bucket of a step of R sequences whose longest chunk is c tokens is {@code rowBucket(R) x c} tokens
 * ({@link #rowBucket}: the next power of two, at most maxSeqs); the step is padded up to it ({@link StepBatch#padTo}).
 * With c = 1 that is the decode bucket. A server speculates with one k, so c is 1..k+1 and the graphs are at most
 * (log2(maxSeqs) + 2) x (k + 1), captured on first use (an eager run of the same step first). Verify steps replay graphs
 * only while {@code multiToken} ({@link KernelChoices#SPEC_GRAPHS_ENV}).
 *
 * @param maxSeqs    the most sequences a step has (its padding row is one more)
 * @param maxTokens  the most tokens a graph may hold: the step buffers' tokens and logits rows, and for MoE models the
 *                   longest step that stays on the device ({@link MoeMlp}: longer ones read expert offsets back to
 *                   the host, which a capture cannot)
 * @param multiToken graphs for steps with several tokens in a sequence (verify steps); false: decode steps only
 */
record GraphBuckets(int maxSeqs, int maxTokens, boolean multiToken) {
    /** No graph: the step runs eagerly. */
    static final int EAGER = 0;

    GraphBuckets {
        if (maxSeqs < 1 || maxTokens < maxSeqs) {
            throw new IllegalArgumentException(
                    "graph buckets need 1 <= maxSeqs (" + maxSeqs + ") <= maxTokens (" + maxTokens + ")");
        }
    }

    /** The graph's tokens for {@code b} ({@link #tokens(int, int, int, int)}). */
    int tokens(StepBatch b) {
        return tokens(b.tokens(), b.logitTokens().length, b.rows(), longestChunk(b.tokenRow(), b.tokens()));
    }

    /**
     * The tokens of the graph a step replays, or {@link #EAGER}: a step of {@code tokens} tokens over {@code rows}
     * sequences, {@code logitRows} logits rows, at most {@code longestChunk} tokens in one sequence.
     */
    int tokens(int tokens, int logitRows, int rows, int longestChunk) {
        if (tokens < 1 || logitRows != tokens || rows < 1 || rows > maxSeqs || longestChunk < 1) {
            return EAGER;
        }
        if (longestChunk == 1) {
            return rowBucket(rows, maxSeqs); // a decode step: its tokens are its rows
        }
        if (!multiToken || longestChunk >= AttentionPlan.MIN_RUN) {
            return EAGER;
        }
        long n = (long) rowBucket(rows, maxSeqs) * longestChunk;
        return n <= maxTokens ? (int) n : EAGER;
    }

    /**
     * Whether no sequence of {@code b} has {@link AttentionPlan#MIN_RUN} or more of its tokens ({@link MlpBlock}'s
     * short chunks: decode and verify steps). Padding does not count: a verify step padded up to its graph's bucket puts
     * every padding token on one extra row ({@link StepBatch#padTo}), often 16 or more of them, yet the step is as short
     * as it was (its MoE layers must keep it on the device, which its capture needs).
     */
    static boolean shortChunks(StepBatch b) {
        return longestChunk(b.tokenRow(), b.realTokens()) < AttentionPlan.MIN_RUN;
    }

    /** The bucket of {@code n} sequences: the next power of two, at most {@code maxSeqs}. */
    static int rowBucket(int n, int maxSeqs) {
        int b = Integer.highestOneBit(Math.max(1, n));
        if (b < n) {
            b <<= 1;
        }
        return Math.min(b, maxSeqs);
    }

    /**
     * The most tokens any one row of {@code tokenRow} (its first {@code n} entries) has; 0 for no tokens. A batch lists
     * each row's tokens together in ascending row order ({@link StepBatch.Builder}): then that is the longest run of equal
     * entries; otherwise it counts per row.
     */
    static int longestChunk(int[] tokenRow, int n) {
        int best = 0;
        int run = 0;
        for (int t = 0; t < n; t++) {
            if (t > 0 && tokenRow[t] < tokenRow[t - 1]) {
                return countPerRow(tokenRow, n);
            }
            run = t > 0 && tokenRow[t] == tokenRow[t - 1] ? run + 1 : 1;
            best = Math.max(best, run);
        }
        return best;
    }

    private static int countPerRow(int[] tokenRow, int n) {
        java.util.Map<Integer, Integer> counts = new java.util.HashMap<>();
        int best = 0;
        for (int t = 0; t < n; t++) {
            best = Math.max(best, counts.merge(tokenRow[t], 1, Integer::sum));
        }
        return best;
    }
}
