package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.SplittableRandom;

/**
 * The host side of the rejection rule ({@link SpecRule#verify}) for guesses drawn from a draft model's own next-token
 * distributions q (a {@link Proposer.Session#proposeSampled}), as opposed to point-mass guesses checked by equal draws.
 * It serves requests that sample by temperature alone ({@link #applies}: no top-k, top-p or min-p, so that p is
 * softmax(logits / T) over the whole vocabulary, the distribution the GPU's sampler draws from); the target's p of a
 * verify step's rows come from its logits on the host. The output is distributed as sampling from p, at an acceptance of
 * sum min(p, q) per guess where equal draws of a point-mass guess d accept p(d). Its draws are not the plain run's
 * (seeded requests keep their distribution, not their tokens). Pure.
 */
final class SpecSampling {
    private SpecSampling() {}

    /** Whether a request sampling by {@code p} takes guesses drawn from q: temperature alone. */
    static boolean applies(SamplingParams p) {
        return !p.isGreedy() && p.topP() >= 1f && p.effectiveTopK() == 0 && p.minP() <= 0f;
    }

    /** The generator of sequence seed {@code seed}'s guesses ({@code stream} 1) or verdict (2) at counter {@code generated}. */
    static SplittableRandom rng(long seed, int generated, int stream) {
        long x = seed * 0x9E3779B97F4A7C15L + generated * 0xBF58476D1CE4E5B9L + stream * 0x94D049BB133111EBL;
        return new SplittableRandom(x ^ (x >>> 31));
    }

    /**
     * softmax(logits[off, off + limit) / temperature) into {@code out[outOff, outOff + width)}, ids from {@code limit}
     * on 0 (fp64; NaN and -infinity logits weigh 0; all of them: the argmax gets it all).
     */
    static void probabilities(
            float[] logits, int off, int limit, double temperature, double[] out, int outOff, int width) {
        double max = Double.NEGATIVE_INFINITY;
        int best = 0;
        for (int v = 0; v < limit; v++) {
            if (logits[off + v] > max) {
                max = logits[off + v];
                best = v;
            }
        }
        java.util.Arrays.fill(out, outOff, outOff + width, 0.0);
        if (!(max > Double.NEGATIVE_INFINITY)) {
            out[outOff + best] = 1;
            return;
        }
        double sum = 0;
        for (int v = 0; v < limit; v++) {
            float l = logits[off + v];
            double w = l > Float.NEGATIVE_INFINITY ? Math.exp((l - max) / temperature) : 0;
            out[outOff + v] = w;
            sum += w;
        }
        for (int v = 0; v < limit; v++) {
            out[outOff + v] /= sum;
        }
    }

    /** The id of {@code q[off, off + width)} whose cumulative weight first exceeds {@code u} (its last positive id at the end). */
    static int draw(double[] q, int off, int width, double u) {
        double cum = 0;
        int last = 0;
        for (int v = 0; v < width; v++) {
            double w = q[off + v];
            if (w > 0) {
                cum += w;
                last = v;
                if (cum > u) {
                    return v;
                }
            }
        }
        return last;
    }

    /**
     * The verdict on {@code n} guesses {@code draft} drawn from {@code q} ({@code n x vocab}, or more rows) of a
     * sequence sampling by {@code p} with counter {@code generated}: its verify rows' logits are rows {@code row ...
     * row + n} of {@code logits} ({@code vocab} floats a row), the bonus row last.
     */
    static SpecRule.Verdict verify(
            float[] logits, int row, int vocab, int[] draft, int n, double[] q, SamplingParams p, int generated) {
        double[] pr = new double[(n + 1) * vocab];
        for (int i = 0; i <= n; i++) {
            probabilities(logits, (row + i) * vocab, vocab, p.temperature(), pr, i * vocab, vocab);
        }
        SplittableRandom r = rng(p.seed(), generated, 2);
        double[] u = new double[n];
        for (int i = 0; i < n; i++) {
            u[i] = r.nextDouble();
        }
        return SpecRule.verify(pr, q, draft, n, vocab, u, r.nextDouble());
    }
}
