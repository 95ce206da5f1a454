package io.tensorlane.runtime.cli;

import static io.tensorlane.runtime.cli.KernelCheckMath.floats;
import static io.tensorlane.runtime.cli.KernelCheckMath.ints;
import static io.tensorlane.runtime.cli.KernelCheckMath.toInts;

import io.tensorlane.runtime.llm.ModelKernels;
import io.tensorlane.runtime.sched.SamplingRows;
import io.tensorlane.runtime.text.SamplingParams;
import java.util.Arrays;
import java.util.SplittableRandom;
import jcuda.driver.CUstream;

/**
 * {@code kernelcheck}'s masked sampling cases (tl_sample_f32 with token masks, issue #30 structured outputs): a batch
 * mixing masked and unmasked rows, greedy and seeded, over a vocabulary that is not a multiple of 32. Masked rows must
 * only ever draw allowed ids: a mask of one id (under greedy, temperature, top-k 2, top-p 0.5), a mask of the ids with
 * the lowest logits (greedy: the best of them exactly; seeded: many draws, all inside, chi-square against the softmax
 * over the allowed ids); the unmasked rows of the same batch must draw exactly what they draw in a batch without masks.
 */
final class KernelCheckMaskedSampling {
    private final ModelKernels k;
    private final CUstream stream;
    private final SplittableRandom rnd;
    private final Runnable sync;

    KernelCheckMaskedSampling(ModelKernels k, CUstream stream, SplittableRandom rnd, Runnable sync) {
        this.k = k;
        this.stream = stream;
        this.rnd = rnd;
        this.sync = sync;
    }

    /** One batch per seed; returns what failed ("" when every row drew as it must). */
    String mixedBatch(int vocab, long seed) {
        int words = SamplingRows.maskWords(vocab);
        SamplingParams[] kinds = {
            SamplingParams.greedy(),
            new SamplingParams(1f, 1f, 0, 0f, seed),
            new SamplingParams(0.7f, 1f, 2, 0f, seed + 1),
            new SamplingParams(1.2f, 0.5f, 0, 0.05f, seed + 2)
        };
        int m = 4 * kinds.length; // per kind: one-id mask, lowest-5 mask, unmasked, lowest-5 mask (other row)
        float[] x = new float[m * vocab];
        for (int i = 0; i < x.length; i++) x[i] = (float) (rnd.nextGaussian() * 4);
        SamplingRows masked = new SamplingRows(m);
        SamplingRows plain = new SamplingRows(m);
        int[][] allowed = new int[m][];
        for (int r = 0; r < m; r++) {
            SamplingParams p = kinds[r / 4];
            masked.set(r, p, r);
            plain.set(r, p, r);
            int kind = r % 4;
            if (kind == 2) continue;
            allowed[r] = kind == 0 ? new int[] {rnd.nextInt(vocab)} : lowest(x, r * vocab, vocab, 5);
            if (kind == 3) allowed[r][0] = vocab - 1; // the last id, in the mask's partial last word
            masked.mask(r, mask(allowed[r], words));
        }
        int[] got = draw(x, m, vocab, masked);
        int[] ref = draw(x, m, vocab, plain);
        StringBuilder fail = new StringBuilder();
        for (int r = 0; r < m; r++) {
            if (allowed[r] == null) {
                if (got[r] != ref[r])
                    fail.append("unmasked row ")
                            .append(r)
                            .append(" drew ")
                            .append(got[r])
                            .append(" beside masked rows, ")
                            .append(ref[r])
                            .append(" without; ");
                continue;
            }
            if (indexOf(allowed[r], got[r]) < 0) {
                fail.append("row ")
                        .append(r)
                        .append(" drew ")
                        .append(got[r])
                        .append(" outside ")
                        .append(Arrays.toString(allowed[r]))
                        .append("; ");
            } else if (kinds[r / 4].isGreedy() && got[r] != best(x, r * vocab, allowed[r])) {
                fail.append("greedy row ")
                        .append(r)
                        .append(" drew ")
                        .append(got[r])
                        .append(", the best allowed is ")
                        .append(best(x, r * vocab, allowed[r]))
                        .append("; ");
            }
        }
        return fail.toString();
    }

    /** {@code draws} seeded draws of one row masked to its 6 lowest logits: all inside, chi-square over them. */
    KernelCheckSampling.Outcome lowestLogits(int vocab, int draws, long seed) {
        float[] row = new float[vocab];
        for (int i = 0; i < vocab; i++) row[i] = (float) (rnd.nextGaussian() * 2);
        int[] allowed = lowest(row, 0, vocab, 6);
        int[] mask = mask(allowed, SamplingRows.maskWords(vocab));
        float[] x = new float[draws * vocab];
        SamplingParams p = new SamplingParams(1f, 1f, 0, 0f, seed);
        SamplingRows sr = new SamplingRows(draws);
        for (int d = 0; d < draws; d++) {
            System.arraycopy(row, 0, x, d * vocab, vocab);
            sr.set(d, p, d).mask(d, mask);
        }
        int[] got = draw(x, draws, vocab, sr);
        float[] sub = new float[allowed.length];
        for (int j = 0; j < allowed.length; j++) sub[j] = row[allowed[j]];
        double[] want = KernelCheckSampling.keptDistribution(sub, p);
        long[] seen = new long[allowed.length];
        for (int id : got) {
            int j = indexOf(allowed, id);
            if (j < 0)
                return new KernelCheckSampling.Outcome("drew id " + id + ", not allowed", Double.NaN, Double.NaN);
            seen[j]++;
        }
        double chi2 = 0;
        for (int j = 0; j < allowed.length; j++) {
            double e = want[j] * draws;
            chi2 += (seen[j] - e) * (seen[j] - e) / e;
        }
        double critical = KernelCheckSampling.chiSquareCritical(allowed.length - 1);
        return new KernelCheckSampling.Outcome(
                chi2 <= critical ? "" : "chi-square " + chi2 + " > " + critical, chi2, critical);
    }

    private static int indexOf(int[] a, int v) {
        for (int i = 0; i < a.length; i++) if (a[i] == v) return i;
        return -1;
    }

    static int[] mask(int[] allowed, int words) {
        int[] m = new int[words];
        for (int id : allowed) m[id >>> 5] |= 1 << (id & 31);
        return m;
    }

    /** The ids of the n lowest logits of the row at x[off, off + vocab). */
    static int[] lowest(float[] x, int off, int vocab, int n) {
        Integer[] order = new Integer[vocab];
        for (int i = 0; i < vocab; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Float.compare(x[off + a], x[off + b]));
        int[] out = new int[n];
        for (int i = 0; i < n; i++) out[i] = order[i];
        return out;
    }

    /** The allowed id with the largest logit (ties: the lowest id). */
    static int best(float[] x, int off, int[] allowed) {
        int b = -1;
        for (int id : allowed) {
            if (b < 0 || x[off + id] > x[off + b] || (x[off + id] == x[off + b] && id < b)) b = id;
        }
        return b;
    }

    private int[] draw(float[] x, int m, int vocab, SamplingRows sr) {
        int cap = SamplingRows.capacity(m);
        try (KernelCheckArena a = new KernelCheckArena()) {
            long dX = a.upload(floats(x));
            long dP = a.upload(ints(sr.packWithMasks(cap, vocab)));
            long dOut = a.poisoned(m * 4L);
            k.sampler().sample(dX, m, vocab, vocab, dP, cap, a.upload(ints(new int[2])), dOut, stream);
            sync.run();
            return toInts(a.download(dOut, m * 4));
        }
    }
}
