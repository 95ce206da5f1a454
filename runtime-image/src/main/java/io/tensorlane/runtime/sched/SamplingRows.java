package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.Arrays;

/**
 * The sampling parameters of a step's logits rows, as the GPU sampler reads them (tl_sample_f32 in tl_sample.cuh): one
 * block of {@code capacity} entries per field, in the order temperature, top_p, min_p (fp32), top_k, counter (int32),
 * seed (uint64). {@code counter} is the row's sequence's count of generated tokens: with its seed it fixes the draw, so a
 * seeded request samples the same tokens in any batch. Rows never set are greedy (temperature 0).
 */
public final class SamplingRows {
    private final float[] temperature;
    private final float[] topP;
    private final float[] minP;
    private final int[] topK;
    private final int[] counter;
    private final long[] seed;
    private final int rows;

    public SamplingRows(int rows) {
        temperature = new float[rows];
        topP = new float[rows];
        minP = new float[rows];
        topK = new int[rows];
        counter = new int[rows];
        seed = new long[rows];
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
        return r;
    }

    /** Int32 words per row of the device layout (temperature, top-p, min-p, top-k, seed and its parts). */
    public static final int WORDS_PER_ROW = 7;

    /** Int32 words of the device layout for {@code capacity} rows (even, >= rows): 7 x capacity words. */
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
        }
        for (int i = rows; i < capacity; i++) {
            w[capacity + i] = Float.floatToRawIntBits(1f);
        }
        return w;
    }

    /** Capacity the device buffer is laid out for: {@code maxRows} rounded up to even. */
    public static int capacity(int maxRows) {
        return maxRows + (maxRows & 1);
    }
}
