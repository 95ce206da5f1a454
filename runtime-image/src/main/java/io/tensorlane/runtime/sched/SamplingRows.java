package io.tensorlane.runtime.sched;

import io.tensorlane.contract.SamplingBuffers;
import io.tensorlane.runtime.text.SamplingParams;
import java.util.Arrays;

/**
 * The sampling parameters of a step's logits rows, as the GPU sampler reads them (tl_sample_f32 in tl_sample.cuh): one
 * block of {@code capacity} entries per field, in the order temperature, top_p, min_p (fp32), top_k, counter (int32),
 * seed (uint64), masked (int32), presence, frequency, repetition (fp32), pen_start, pen_bias, pen_count (int32), then a
 * token mask slot per row ({@link #maskOffset}). {@code counter} is the row's
 * sequence's count of generated tokens: with its seed it fixes the draw, so a seeded request samples the same tokens in
 * any batch. Rows never set are greedy (temperature 0). A row with a token mask ({@link #mask}: bit {@code id % 32} of
 * word {@code id / 32} set for an allowed id) samples among its allowed ids only; {@link #pack} writes its flag, the
 * caller uploads the mask itself into the row's slot, so rows without a mask cost nothing. A penalised row ({@link
 * #penalty}) has its (id, value) pairs in a second buffer ({@link #packPenalties}: the penalised rows' pairs one after
 * the other, nothing for the others); its pen_* fields say where. The layout's arithmetic is {@link SamplingBuffers}'s,
 * which the operator's memory plan budgets from.
 */
public final class SamplingRows {
    private final float[] temperature;
    private final float[] topP;
    private final float[] minP;
    private final int[] topK;
    private final int[] counter;
    private final long[] seed;
    private final int[][] masks;
    private final RowPenalty[] penalties;
    private final int rows;

    public SamplingRows(int rows) {
        temperature = new float[rows];
        topP = new float[rows];
        minP = new float[rows];
        topK = new int[rows];
        counter = new int[rows];
        seed = new long[rows];
        masks = new int[rows][];
        penalties = new RowPenalty[rows];
        Arrays.fill(topP, 1f);
        this.rows = rows;
    }

    /** Rows of the step. */
    public int rows() {
        return rows;
    }

    /** Sets row {@code row} to draw by {@code p} as the {@code generated}-th token of its sequence. */
    public SamplingRows set(int row, SamplingParams p, int generated) {
        temperature[row] = p.isGreedy() ? 0f : p.temperature();
        topP[row] = p.topP();
        minP[row] = p.minP();
        topK[row] = p.effectiveTopK();
        counter[row] = generated;
        seed[row] = p.seed();
        return this;
    }

    /** Restricts row {@code row} to the ids set in {@code mask} (null: none; not copied, must not change). */
    public SamplingRows mask(int row, int[] mask) {
        masks[row] = mask;
        return this;
    }

    /** Gives row {@code row} penalty entries (null: none; not copied, must not change). */
    public SamplingRows penalty(int row, RowPenalty p) {
        penalties[row] = p;
        return this;
    }

    /** Row {@code row}'s penalty entries, null when it has none. */
    public RowPenalty penalty(int row) {
        return penalties[row];
    }

    /** Row {@code row}'s token mask, null when it has none. */
    public int[] mask(int row) {
        return masks[row];
    }

    /** Whether the device parameters are all zeros but top_p: every row greedy and unmasked (no upload needed). */
    public boolean trivial() {
        if (!allGreedy()) {
            return false;
        }
        for (int i = 0; i < rows; i++) {
            if (masks[i] != null || penalties[i] != null) {
                return false;
            }
        }
        return true;
    }

    /** Row {@code row}'s parameters (greedy rows: temperature 0). */
    public SamplingParams params(int row) {
        return new SamplingParams(temperature[row], topP[row], topK[row], minP[row], seed[row]);
    }

    /** Row {@code row}'s count of tokens its sequence generated before this draw. */
    public int counter(int row) {
        return counter[row];
    }

    /** Whether every row takes the argmax. */
    public boolean allGreedy() {
        for (int i = 0; i < rows; i++) {
            if (temperature[i] > 0) {
                return false;
            }
        }
        return true;
    }

    /** The same rows followed by greedy rows up to {@code n} (a padded decode step). */
    public SamplingRows padTo(int n) {
        SamplingRows r = new SamplingRows(n);
        System.arraycopy(temperature, 0, r.temperature, 0, rows);
        System.arraycopy(topP, 0, r.topP, 0, rows);
        System.arraycopy(minP, 0, r.minP, 0, rows);
        System.arraycopy(topK, 0, r.topK, 0, rows);
        System.arraycopy(counter, 0, r.counter, 0, rows);
        System.arraycopy(seed, 0, r.seed, 0, rows);
        System.arraycopy(masks, 0, r.masks, 0, rows);
        System.arraycopy(penalties, 0, r.penalties, 0, rows);
        return r;
    }

    /** Int32 words per row of the parameters ({@link SamplingBuffers#WORDS_PER_ROW}). */
    public static final int WORDS_PER_ROW = SamplingBuffers.WORDS_PER_ROW;

    /** Int32 words of one token mask over {@code vocab} ids ({@link SamplingBuffers#maskWords}). */
    public static int maskWords(int vocab) {
        return SamplingBuffers.maskWords(vocab);
    }

    /** Where row {@code row}'s mask starts (int32 words from the layout's start) for {@code capacity} rows. */
    public static long maskOffset(int capacity, int row, int vocab) {
        return SamplingBuffers.maskOffset(capacity, row, vocab);
    }

    /** Int32 words of the whole device layout: the parameters and a mask slot per row. */
    public static long layoutWords(int capacity, int vocab) {
        return SamplingBuffers.layoutWords(capacity, vocab);
    }

    /** Int32 words of the parameters for {@code capacity} rows (even, >= rows): 14 x capacity words (no masks). */
    public int[] pack(int capacity) {
        if (capacity < rows || capacity % 2 != 0) {
            throw new IllegalArgumentException("capacity " + capacity + " must be even and >= " + rows + " rows");
        }
        int[] w = new int[WORDS_PER_ROW * capacity];
        for (int i = 0; i < rows; i++) {
            w[i] = Float.floatToRawIntBits(temperature[i]);
            w[capacity + i] = Float.floatToRawIntBits(topP[i]);
            w[2 * capacity + i] = Float.floatToRawIntBits(minP[i]);
            w[3 * capacity + i] = topK[i];
            w[4 * capacity + i] = counter[i];
            w[5 * capacity + 2 * i] = (int) seed[i]; // little-endian uint64
            w[5 * capacity + 2 * i + 1] = (int) (seed[i] >>> 32);
            w[7 * capacity + i] = masks[i] != null ? 1 : 0;
        }
        int start = 0;
        for (int i = 0; i < capacity; i++) {
            RowPenalty p = i < rows ? penalties[i] : null;
            w[10 * capacity + i] = Float.floatToRawIntBits(p == null ? 1f : p.repetition());
            if (p != null) {
                w[8 * capacity + i] = Float.floatToRawIntBits(p.presence());
                w[9 * capacity + i] = Float.floatToRawIntBits(p.frequency());
                w[11 * capacity + i] = start;
                w[12 * capacity + i] = p.biasPairs();
                w[13 * capacity + i] = p.countPairs();
                start += p.entries();
            }
        }
        for (int i = rows; i < capacity; i++) {
            w[capacity + i] = Float.floatToRawIntBits(1f);
        }
        return w;
    }

    /** The penalised rows' (id, value) pairs, in row order, as int32 words (empty when no row is penalised). */
    public int[] packPenalties() {
        int n = 0;
        for (RowPenalty p : penalties) {
            n += p == null ? 0 : p.pairs().length;
        }
        int[] w = new int[n];
        int at = 0;
        for (RowPenalty p : penalties) {
            if (p != null) {
                System.arraycopy(p.pairs(), 0, w, at, p.pairs().length);
                at += p.pairs().length;
            }
        }
        return w;
    }

    /**
     * The whole device layout for {@code capacity} rows over {@code vocab} ids: {@link #pack} and each masked row's mask
     * in its slot ({@link #layoutWords} ints; kernelcheck uploads it in one piece, the engine per slot).
     */
    public int[] packWithMasks(int capacity, int vocab) {
        int[] w = java.util.Arrays.copyOf(pack(capacity), Math.toIntExact(layoutWords(capacity, vocab)));
        for (int r = 0; r < rows; r++) {
            if (masks[r] != null) {
                if (masks[r].length != maskWords(vocab)) {
                    throw new IllegalArgumentException("row " + r + ": mask of " + masks[r].length + " words, vocab "
                            + vocab + " needs " + maskWords(vocab));
                }
                System.arraycopy(masks[r], 0, w, (int) maskOffset(capacity, r, vocab), masks[r].length);
            }
        }
        return w;
    }

    /** Capacity the device buffer is laid out for: {@code maxRows} rounded up to even. */
    public static int capacity(int maxRows) {
        return SamplingBuffers.capacity(maxRows);
    }
}
