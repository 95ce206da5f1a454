package io.tensorlane.runtime.llm;

/**
 * Host references of the Mixture-of-Experts kernels (tl_moe.cuh), in double: what {@code kernelcheck} compares the GPU
 * with, and the routing rule unit-tested on a CPU. Pure.
 */
public final class MoeReference {
    private MoeReference() {}

    /** Each token's k experts ({@code ids[t*k + s]}, descending probability) and their weights. */
    public record Routing(int[] ids, double[] weights) {}

    /**
     * transformers' routing (Qwen3-MoE, Mixtral): p = softmax(logits[t, :]); the k largest p, ties to the lower index;
     * weight = p, or p / (sum of the k) when {@code norm}.
     */
    public static Routing route(double[] logits, int n, int experts, int k, boolean norm) {
        int[] ids = new int[n * k];
        double[] w = new double[n * k];
        for (int t = 0; t < n; t++) {
            double max = Double.NEGATIVE_INFINITY;
            for (int e = 0; e < experts; e++) {
                max = Math.max(max, logits[t * experts + e]);
            }
            double[] p = new double[experts];
            double sum = 0;
            for (int e = 0; e < experts; e++) {
                p[e] = Math.exp(logits[t * experts + e] - max);
                sum += p[e];
            }
            boolean[] taken = new boolean[experts];
            double chosen = 0;
            for (int s = 0; s < k; s++) {
                int best = -1;
                for (int e = 0; e < experts; e++) {
                    if (!taken[e] && (best < 0 || p[e] > p[best])) {
                        best = e;
                    }
                }
                taken[best] = true;
                ids[t * k + s] = best;
                w[t * k + s] = p[best];
                chosen += p[best];
            }
            for (int s = 0; s < k; s++) {
                w[t * k + s] /= norm ? chosen : sum;
            }
        }
        return new Routing(ids, w);
    }

    /**
     * The pairs' expert projections: y[p, o] = w[ids[p], o, :] · x[p / k, :] (x [n, in], w [experts, out, in]).
     */
    public static double[] gateUp(double[] x, double[] w, int[] ids, int n, int k, int in, int out) {
        double[] y = new double[n * k * out];
        for (int p = 0; p < n * k; p++) {
            int t = p / k;
            long base = (long) ids[p] * out * in;
            for (int o = 0; o < out; o++) {
                double acc = 0;
                for (int c = 0; c < in; c++) {
                    acc += w[(int) (base + (long) o * in + c)] * x[t * in + c];
                }
                y[p * out + o] = acc;
            }
        }
        return y;
    }

    /** y[t, o] = sum over s of weights[t*k+s] * (w[ids[t*k+s], o, :] · act[t*k+s, :]) (act [n*k, in]). */
    public static double[] down(double[] act, double[] w, int[] ids, double[] weights, int n, int k, int in, int out) {
        double[] pairs = gateUp(act, w, ids, n * k, 1, in, out);
        double[] y = new double[n * out];
        for (int t = 0; t < n; t++) {
            for (int s = 0; s < k; s++) {
                int p = t * k + s;
                for (int o = 0; o < out; o++) {
                    y[t * out + o] += weights[p] * pairs[p * out + o];
                }
            }
        }
        return y;
    }
}
