package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The host side of one forward step: a mixed batch of prefill chunks and decode tokens, flattened into the arrays the
 * kernels read. Token {@code t} belongs to batch row {@code tokenRow[t]} (a sequence), sits at {@code positions[t]},
 * and its K/V go to cache slot {@code slots[t]} ({@code block * blockSize + position % blockSize}). {@code blockTables}
 * is {@code rows × maxBlocksPerSeq}. Logits are produced for the tokens listed in {@code logitTokens}, and the GPU draws
 * each logits row's token by {@code sampling} (one entry per logits row). The last {@code padTokens} tokens are padding
 * ({@link #padTo}): 0 for a batch as built.
 */
public record StepBatch(
        int[] tokenIds,
        int[] positions,
        int[] slots,
        int[] tokenRow,
        int rows,
        int[] blockTables,
        int maxBlocksPerSeq,
        int[] logitTokens,
        SamplingRows sampling,
        int padTokens) {

    public StepBatch {
        if (sampling.rows() != logitTokens.length) {
            throw new IllegalArgumentException(
                    "sampling rows " + sampling.rows() + " != logits rows " + logitTokens.length);
        }
        if (padTokens < 0 || padTokens > tokenIds.length) {
            throw new IllegalArgumentException(padTokens + " padding tokens of " + tokenIds.length);
        }
    }

    public int tokens() {
        return tokenIds.length;
    }

    /** The tokens before the padding: the step's own (all of them unless {@link #padTo} padded it). */
    public int realTokens() {
        return tokenIds.length - padTokens;
    }

    /** Builds a batch row by row. */
    public static final class Builder {
        private final int blockSize;
        private final int maxBlocksPerSeq;
        private int[] ids = new int[16];
        private int[] pos = new int[16];
        private int[] slots = new int[16];
        private int[] row = new int[16];
        private int n;
        private int[] tables = new int[0];
        private int rows;
        private int[] logits = new int[8];
        private int m;
        private final List<Draw> draws = new ArrayList<>();

        private record Draw(int row, SamplingParams params, int generated, int[] mask, RowPenalty penalty) {}

        public Builder(int blockSize, int maxBlocksPerSeq) {
            this.blockSize = blockSize;
            this.maxBlocksPerSeq = maxBlocksPerSeq;
        }

        /**
         * Adds one sequence: {@code chunk} are its next tokens, the first at position {@code startPos}; its block table must
         * already cover {@code startPos + chunk.length} tokens. Logits: none, the chunk's last token, or every token.
         */
        public Builder add(List<Integer> blockTable, int[] chunk, int startPos, Logits want) {
            if (chunk.length == 0) {
                throw new IllegalArgumentException("empty chunk");
            }
            if (blockTable.size() > maxBlocksPerSeq) {
                throw new IllegalArgumentException(
                        "block table of " + blockTable.size() + " blocks exceeds " + maxBlocksPerSeq);
            }
            long end = (long) startPos + chunk.length;
            if (end > (long) blockTable.size() * blockSize) {
                throw new IllegalArgumentException(
                        "block table holds " + blockTable.size() * blockSize + " tokens, chunk ends at " + end);
            }
            int r = rows++;
            if (rows * maxBlocksPerSeq > tables.length) {
                // geometric growth: a row at a time would copy the whole table per row (quadratic in the batch)
                tables = Arrays.copyOf(
                        tables, Math.max(rows, 2 * (tables.length / Math.max(1, maxBlocksPerSeq))) * maxBlocksPerSeq);
            }
            for (int i = 0; i < blockTable.size(); i++) {
                tables[r * maxBlocksPerSeq + i] = blockTable.get(i);
            }
            for (int i = 0; i < chunk.length; i++) {
                int p = startPos + i;
                grow(n + 1);
                ids[n] = chunk[i];
                pos[n] = p;
                slots[n] = blockTable.get(p / blockSize) * blockSize + p % blockSize;
                row[n] = r;
                if (want == Logits.ALL || (want == Logits.LAST && i == chunk.length - 1)) {
                    if (m == logits.length) {
                        logits = Arrays.copyOf(logits, m * 2);
                    }
                    logits[m++] = n;
                }
                n++;
            }
            return this;
        }

        private void grow(int need) {
            if (need > ids.length) {
                int cap = Math.max(need, ids.length * 2);
                ids = Arrays.copyOf(ids, cap);
                pos = Arrays.copyOf(pos, cap);
                slots = Arrays.copyOf(slots, cap);
                row = Arrays.copyOf(row, cap);
            }
        }

        public int tokens() {
            return n;
        }

        public int rows() {
            return rows;
        }

        /**
         * The last logits row added draws by {@code p} as its sequence's {@code generated}-th token (rows without a call are
         * greedy).
         */
        public Builder sample(SamplingParams p, int generated) {
            if (m == 0) {
                throw new IllegalStateException("no logits row to sample");
            }
            draws.add(new Draw(m - 1, p, generated, null, null));
            return this;
        }

        /**
         * The last {@code rows} logits rows added (a verify chunk's) draw by {@code p} as their sequence's {@code
         * generated}-th, {@code generated + 1}-th, ... token: each row with the counter the non-speculative run gives it.
         */
        public Builder sampleLast(int rows, SamplingParams p, int generated) {
            if (rows < 1 || rows > m) {
                throw new IllegalStateException(rows + " rows to sample, " + m + " logits rows");
            }
            for (int i = 0; i < rows; i++) {
                draws.add(new Draw(m - rows + i, p, generated + i, null, null));
            }
            return this;
        }

        /** Restricts the last draw ({@link #sample}) to the ids of {@code mask} ({@link SamplingRows#mask}; null: none). */
        public Builder mask(int[] mask) {
            if (draws.isEmpty()) {
                throw new IllegalStateException("no draw to mask");
            }
            Draw d = draws.remove(draws.size() - 1);
            draws.add(new Draw(d.row(), d.params(), d.generated(), mask, d.penalty()));
            return this;
        }

        /** Gives the last draw ({@link #sample}) penalty entries ({@link SamplingRows#penalty}; null: none). */
        public Builder penalty(RowPenalty p) {
            if (draws.isEmpty()) {
                throw new IllegalStateException("no draw to penalize");
            }
            Draw d = draws.remove(draws.size() - 1);
            draws.add(new Draw(d.row(), d.params(), d.generated(), d.mask(), p));
            return this;
        }

        public StepBatch build() {
            SamplingRows sr = new SamplingRows(m);
            for (Draw d : draws) {
                sr.set(d.row(), d.params(), d.generated())
                        .mask(d.row(), d.mask())
                        .penalty(d.row(), d.penalty());
            }
            return new StepBatch(
                    Arrays.copyOf(ids, n),
                    Arrays.copyOf(pos, n),
                    Arrays.copyOf(slots, n),
                    Arrays.copyOf(row, n),
                    rows,
                    Arrays.copyOf(tables, rows * maxBlocksPerSeq),
                    maxBlocksPerSeq,
                    Arrays.copyOf(logits, m),
                    sr,
                    0);
        }
    }

    /** Which of a chunk's tokens get logits. */
    public enum Logits {
        NONE,
        LAST,
        ALL
    }

    /**
     * The same batch padded to {@code bucket} tokens for a captured decode or verify graph: padding tokens write no K/V (slot -1),
     * sit at position 0 of an extra row whose block table is block 0, and get logits rows that nobody reads.
     */
    public StepBatch padTo(int bucket) {
        int n = tokens();
        if (bucket < n) {
            throw new IllegalArgumentException("bucket " + bucket + " < " + n + " tokens");
        }
        if (bucket == n) {
            return this;
        }
        int[] ids = Arrays.copyOf(tokenIds, bucket);
        int[] pos = Arrays.copyOf(positions, bucket);
        int[] sl = Arrays.copyOf(slots, bucket);
        int[] rw = Arrays.copyOf(tokenRow, bucket);
        int[] lt = Arrays.copyOf(logitTokens, logitTokens.length + bucket - n);
        for (int t = n; t < bucket; t++) {
            sl[t] = -1;
            rw[t] = rows;
            lt[logitTokens.length + t - n] = t;
        }
        int[] tables = Arrays.copyOf(blockTables, (rows + 1) * maxBlocksPerSeq);
        return new StepBatch(
                ids,
                pos,
                sl,
                rw,
                rows + 1,
                tables,
                maxBlocksPerSeq,
                lt,
                sampling.padTo(lt.length),
                padTokens + bucket - n);
    }
}
