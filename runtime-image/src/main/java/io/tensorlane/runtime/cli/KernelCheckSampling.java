package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;

import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.llm.ModelReference;
import io.tensorlane.runtime.sched.SamplingRows;
import io.tensorlane.runtime.text.SamplingParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s sampling cases (tl_sample_f32): greedy rows against the exact argmax reference (ties, NaN,
 * padding past the vocabulary), and seeded draws against the distribution the filters leave (temperature, top-k, top-p,
 * min-p; {@link #keptDistribution}): thousands of draws of one row (counters 0..n-1) must never leave the kept set and
 * must pass a chi-square test at p = 1e-4; the same seed and counter must draw the same token again.
 */
final class KernelCheckSampling {
    /** One checked case: what failed (empty: passed) and the chi-square statistic against its critical value. */
    record Outcome(String failure, double chi2, double critical) {
        boolean pass() {
            return failure.isEmpty();
        }
    }

    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;

    KernelCheckSampling(ModelKernels k, CUstream stream, SplittableRandom rnd, Runnable sync) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
    }

    /** Greedy rows: ties to the lowest index, NaN never wins, padding past vocab ignored. Returns the mismatching rows. */
    String greedy() {
        int m = 4;
        int vocab = 50000;
        int stride = 50048;
        float[] x = new float[m * stride];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) (rnd.nextDouble() * 20 - 10);
        }
        for (int i = 0; i < m; i++) {
            Arrays.fill(x, i * stride + vocab, (i + 1) * stride, 1e30f); // padding past vocab must be ignored
        }
        x[100] = 50f; // row 0: tie between 100 and 40000 -> 100
        x[40000] = 50f;
        x[stride] = Float.NaN; // row 1: NaN never wins
        x[stride + 7] = Float.NaN;
        x[stride + 3000] = 40f;
        x[2 * stride + vocab - 1] = 60f; // row 2: the last index
        Arrays.fill(x, 3 * stride, 3 * stride + vocab, 1f); // row 3: all equal, NaN first -> 1
        x[3 * stride] = Float.NaN;
        int[] got = draw(x, m, vocab, stride, new SamplingRows(m));
        int[] ref = ModelReference.argmax(x, m, vocab, stride);
        return Arrays.equals(got, ref) ? "" : "got " + Arrays.toString(got) + ", expected " + Arrays.toString(ref);
    }

    /** {@code draws} seeded draws of one random row of {@code vocab} logits under {@code p}. */
    Outcome distribution(int vocab, SamplingParams p, int draws) {
        float[] row = new float[vocab];
        for (int i = 0; i < vocab; i++) {
            row[i] = (float) (rnd.nextDouble() * 8 - 4);
        }
        float[] x = new float[draws * vocab];
        SamplingRows sr = new SamplingRows(draws);
        for (int d = 0; d < draws; d++) {
            System.arraycopy(row, 0, x, d * vocab, vocab);
            sr.set(d, p, d);
        }
        int[] got = draw(x, draws, vocab, vocab, sr);
        double[] want = keptDistribution(row, p);
        long[] seen = new long[vocab];
        for (int id : got) {
            if (id < 0 || id >= vocab || want[id] == 0) {
                return new Outcome("drew id " + id + ", outside the kept set", Double.NaN, Double.NaN);
            }
            seen[id]++;
        }
        // chi-square over the kept ids, those expecting fewer than 5 draws pooled into one cell
        double[] c = chiSquare(seen, want);
        double chi2 = c[0];
        double critical = c[1];
        int[] again = draw(x, draws, vocab, vocab, sr);
        if (!Arrays.equals(got, again)) {
            return new Outcome("the same seeds and counters drew other tokens", chi2, critical);
        }
        return new Outcome(chi2 <= critical ? "" : "chi-square " + chi2 + " > " + critical, chi2, critical);
    }

    /**
     * Seeded draws, temperature 1 and no filter, of a row where one id holds all but ~e^-40 x vocab of the mass: every
     * draw must be that id. Catches a uniform that can reach 1.0 (its Gumbel score +inf wins whatever the logit; with a
     * 24-bit uniform that was 1 in 2^24 ids a draw: ~9 of 1,000 draws over 152k ids).
     */
    Outcome dominantId(int vocab, int draws) {
        int id = vocab / 3;
        float[] x = new float[draws * vocab];
        Arrays.fill(x, -40f);
        SamplingRows sr = new SamplingRows(draws);
        SamplingParams p = new SamplingParams(1f, 1f, 0, 0f, 20261203L);
        for (int d = 0; d < draws; d++) {
            x[d * vocab + id] = 0f;
            sr.set(d, p, d);
        }
        int[] got = draw(x, draws, vocab, vocab, sr);
        long other = Arrays.stream(got).filter(g -> g != id).count();
        return new Outcome(
                other == 0 ? "" : other + " of " + draws + " draws took another id than " + id, Double.NaN, Double.NaN);
    }

    /** Seeded draws over a full-size vocabulary: every draw inside the kept set (vLLM order of the filters). */
    Outcome largeVocabulary(int vocab, SamplingParams p, int rows) {
        float[] x = new float[rows * vocab];
        List<double[]> kept = new ArrayList<>();
        SamplingRows sr = new SamplingRows(rows);
        for (int r = 0; r < rows; r++) {
            float[] row = new float[vocab];
            for (int i = 0; i < vocab; i++) {
                row[i] = (float) (rnd.nextGaussian() * 3);
            }
            System.arraycopy(row, 0, x, r * vocab, vocab);
            kept.add(keptDistribution(row, p));
            sr.set(r, p, r);
        }
        int[] got = draw(x, rows, vocab, vocab, sr);
        for (int r = 0; r < rows; r++) {
            if (got[r] < 0 || got[r] >= vocab || kept.get(r)[got[r]] == 0) {
                return new Outcome(
                        "row " + r + " drew id " + got[r] + ", outside the kept set", Double.NaN, Double.NaN);
            }
        }
        return new Outcome("", Double.NaN, Double.NaN);
    }

    private int[] draw(float[] x, int m, int vocab, int stride, SamplingRows sr) {
        int cap = SamplingRows.capacity(m);
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(floats(x));
            long dP = a.upload(ints(sr.pack(cap)));
            long dOut = a.poisoned(m * 4L);
            k.sampler().sample(dX, m, vocab, stride, dP, cap, a.upload(ints(new int[2])), dOut, stream);
            sync.run();
            return toInts(a.download(dOut, m * 4));
        }
    }

    /**
     * The distribution a draw must follow (fp64): softmax(l / T) restricted to the logits >= the k-th largest, then to the
     * smallest set of the most probable survivors whose renormalized mass reaches top_p, then to probabilities >= min_p x
     * the largest; renormalized. Rows are tie-free here, so the sets are unambiguous.
     */
    static double[] keptDistribution(float[] logits, SamplingParams p) {
        int v = logits.length;
        Integer[] order = new Integer[v];
        for (int i = 0; i < v; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Float.compare(logits[b], logits[a]));
        double max = logits[order[0]];
        double[] w = new double[v];
        for (int i = 0; i < v; i++) {
            w[i] = Math.exp((logits[i] - max) / p.temperature());
        }
        int keep = p.effectiveTopK() > 0 ? Math.min(p.effectiveTopK(), v) : v;
        if (p.topP() < 1) {
            double total = 0;
            for (int r = 0; r < keep; r++) {
                total += w[order[r]];
            }
            double cum = 0;
            for (int r = 0; r < keep; r++) {
                cum += w[order[r]];
                if (cum >= p.topP() * total) {
                    keep = r + 1;
                    break;
                }
            }
        }
        double[] out = new double[v];
        double sum = 0;
        for (int r = 0; r < keep; r++) {
            int i = order[r];
            if (w[i] >= p.minP()) { // w of the largest is 1: p_i >= min_p x p_max
                out[i] = w[i];
                sum += w[i];
            }
        }
        for (int i = 0; i < v; i++) {
            out[i] /= sum;
        }
        return out;
    }

    /**
     * {statistic, critical value at p = 1e-4} of {@code seen} draws against the distribution {@code want}: a cell per id
     * expected at least 5 times, the rest pooled into one (ids of weight 0 add nothing while nothing was drawn there).
     */
    static double[] chiSquare(long[] seen, double[] want) {
        long n = Arrays.stream(seen).sum();
        double chi2 = 0;
        int cells = 0;
        double poolE = 0;
        long poolO = 0;
        for (int i = 0; i < want.length; i++) {
            double e = want[i] * n;
            if (e < 5) {
                poolE += e;
                poolO += seen[i];
                continue;
            }
            chi2 += (seen[i] - e) * (seen[i] - e) / e;
            cells++;
        }
        if (poolE > 0) {
            chi2 += (poolO - poolE) * (poolO - poolE) / poolE;
            cells++;
        }
        return new double[] {chi2, chiSquareCritical(Math.max(1, cells - 1))};
    }

    /** Chi-square critical value at p = 1e-4 (Wilson-Hilferty). */
    static double chiSquareCritical(int df) {
        double z = 3.719;
        double a = 2.0 / (9 * df);
        return df * Math.pow(1 - a + z * Math.sqrt(a), 3);
    }
}
