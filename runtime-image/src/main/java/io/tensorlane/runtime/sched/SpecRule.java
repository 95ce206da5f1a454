package io.tensorlane.runtime.sched;

/**
 * The acceptance rules of speculative decoding (host reference; pure functions). For positions {@code i < k} the
 * proposer guessed {@code draft[i]} with probability {@code q_i} and the target gives {@code p_i}; position {@code k}
 * is the bonus row after the last guess.
 *
 * <ul>
 *   <li><b>Equal draws</b> ({@link #acceptWhileEqual}): the target's own token per row (its argmax, or a draw by the
 *       ordinary sampler) is compared with the guess; the run of equal ones is kept, then the target's token of the
 *       first unequal row (or of the bonus row). Exact for greedy decoding and for any proposer whose guess is a point
 *       mass (n-gram): row i's draw is then distributed as p_i, and accepting iff it equals the guess is the rejection
 *       rule below with q = the point mass (accept with probability p_i(d), else draw from the residual, which is p_i
 *       without d renormalised — the distribution of a p_i-draw given that it is not d).
 *   <li><b>Rejection sampling</b> ({@link #verify}, Leviathan et al. 2023 / Chen et al. 2023): accept guess i with
 *       probability {@code min(1, p_i(d)/q_i(d))}; at the first rejection draw from {@code max(0, p_i - q_i)}
 *       normalised; when all k are accepted draw the bonus token from {@code p_k}. The output is distributed exactly as
 *       sampling from p. The draft-model proposer needs this one; the GPU kernel is {@code tl_spec_verify_f32}
 *       (tl_spec.cuh), which follows this reference.
 * </ul>
 */
public final class SpecRule {
    private SpecRule() {}

    /** The verdict on one sequence's guesses: {@code accepted} leading guesses kept, then the token {@code next}. */
    public record Verdict(int accepted, int next) {}

    /**
     * Equal draws: {@code target[i]} is the target's token of row i (k + 1 rows, the bonus last), {@code draft} the k
     * guesses. Returns how many leading guesses equal the target's tokens; the token after them is
     * {@code target[accepted]}.
     */
    public static int acceptWhileEqual(int[] draft, int k, int[] target, int offset) {
        int a = 0;
        while (a < k && target[offset + a] == draft[a]) {
            a++;
        }
        return a;
    }

    /**
     * Rejection sampling over {@code vocab} ids: {@code p} is (k + 1) x vocab target probabilities, {@code q} k x vocab
     * proposal probabilities (rows sum to 1), {@code u} k uniforms in [0, 1): {@code u[i]} decides guess i; the one
     * draw after the verdict uses {@code uDraw} (inverse CDF over row i's residual, or over p_k when all k are kept).
     */
    public static Verdict verify(double[] p, double[] q, int[] draft, int k, int vocab, double[] u, double uDraw) {
        for (int i = 0; i < k; i++) {
            int d = draft[i];
            double pd = p[i * vocab + d];
            double qd = q[i * vocab + d];
            // accept with min(1, p/q): u < p/q  <=>  u * q < p (q > 0 for a guess the proposer could make)
            if (!(u[i] * qd < pd)) {
                return new Verdict(i, inverseCdf(residual(p, q, i, vocab), uDraw));
            }
        }
        double[] last = new double[vocab];
        System.arraycopy(p, k * vocab, last, 0, vocab);
        return new Verdict(k, inverseCdf(last, uDraw));
    }

    /**
     * Row {@code i}'s residual {@code max(0, p_i - q_i)}, unnormalised (the draw normalises). Where it is all zero (p_i
     * = q_i, so a rejection had probability 0) it is p_i itself.
     */
    public static double[] residual(double[] p, double[] q, int i, int vocab) {
        double[] r = new double[vocab];
        double sum = 0;
        for (int v = 0; v < vocab; v++) {
            r[v] = Math.max(0, p[i * vocab + v] - q[i * vocab + v]);
            sum += r[v];
        }
        if (!(sum > 0)) {
            System.arraycopy(p, i * vocab, r, 0, vocab);
        }
        return r;
    }

    /** The id whose cumulative weight first exceeds {@code u x total} (weights need not sum to 1); the last positive id at the end. */
    public static int inverseCdf(double[] w, double u) {
        double total = 0;
        for (double x : w) {
            total += x;
        }
        double target = u * total;
        double cum = 0;
        int last = -1;
        for (int v = 0; v < w.length; v++) {
            if (w[v] > 0) {
                cum += w[v];
                last = v;
                if (cum > target) {
                    return v;
                }
            }
        }
        return last;
    }

    /**
     * The distribution of the first output token of {@link #verify} for one guess position drawn from q (exact,
     * fp64): {@code P(x) = sum_d q(d) [d = x] min(1, p(x)/q(x)) + P(reject) r(x)}, which the rule makes equal to p.
     * Tests compare it with p; the kernelcheck case uses p directly.
     */
    public static double[] firstTokenDistribution(double[] p, double[] q, int vocab) {
        double[] out = new double[vocab];
        double reject = 0;
        for (int x = 0; x < vocab; x++) {
            double acc = q[x] > 0 ? Math.min(1, p[x] / q[x]) : 0;
            out[x] = q[x] * acc;
            reject += q[x] * (1 - acc);
        }
        double[] r = residual(p, q, 0, vocab);
        double rs = 0;
        for (double x : r) {
            rs += x;
        }
        for (int x = 0; x < vocab; x++) {
            out[x] += reject * r[x] / rs;
        }
        return out;
    }
}
