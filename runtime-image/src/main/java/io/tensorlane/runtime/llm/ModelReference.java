package io.tensorlane.runtime.llm;

/**
 * fp64 host references of the model kernels (tl_model.cu), for {@code kernelcheck} and unit tests. Inputs are the values
 * the device sees (already rounded to their storage type, decoded to double); tensors are row-major flat arrays with the
 * same layouts as the kernels.
 */
public final class ModelReference {
    private ModelReference() {}

    /** out[i,:] = table[ids[i] - vocabStart, :] when inside [0, vocabRows), else 0. */
    public static double[] embed(int[] ids, double[] table, int vocabStart, int vocabRows, int hidden) {
        double[] out = new double[ids.length * hidden];
        for (int i = 0; i < ids.length; i++) {
            int r = ids[i] - vocabStart;
            if (r >= 0 && r < vocabRows) {
                System.arraycopy(table, r * hidden, out, i * hidden, hidden);
            }
        }
        return out;
    }

    /** Result of {@link #addRmsNorm}: the new residual and the normalised output. */
    public record Norm(double[] residual, double[] out) {}

    /** mode 0: residual = delta; 1: residual += delta; 2: unchanged; out = weight * r / sqrt(mean(r^2) + eps). */
    public static Norm addRmsNorm(
            double[] residual, double[] delta, double[] weight, int n, int hidden, double eps, int mode) {
        double[] r = residual.clone();
        double[] out = new double[n * hidden];
        for (int i = 0; i < n; i++) {
            double ss = 0;
            for (int j = 0; j < hidden; j++) {
                int k = i * hidden + j;
                if (mode == 0) {
                    r[k] = delta[k];
                } else if (mode == 1) {
                    r[k] += delta[k];
                }
                ss += r[k] * r[k];
            }
            double inv = 1 / Math.sqrt(ss / hidden + eps);
            for (int j = 0; j < hidden; j++) {
                int k = i * hidden + j;
                out[k] = weight[j] * r[k] * inv;
            }
        }
        return new Norm(r, out);
    }

    /** cos/sin tables [maxPositions, hd/2] (fp32 as the engine stores them): angle p * theta^(-2i/hd). */
    public static float[][] ropeTables(int maxPositions, int hd, double theta) {
        int half = hd / 2;
        float[] cos = new float[maxPositions * half];
        float[] sin = new float[maxPositions * half];
        for (int p = 0; p < maxPositions; p++) {
            for (int i = 0; i < half; i++) {
                double invFreq = Math.pow(theta, -2.0 * i / hd);
                double a = p * invFreq;
                cos[p * half + i] = (float) Math.cos(a);
                sin[p * half + i] = (float) Math.sin(a);
            }
        }
        return new float[][] {cos, sin};
    }

    /** Hugging Face rotate_half RoPE of one head (x has hd elements starting at off) at row pos of the tables. */
    public static double[] rope(double[] x, int off, int hd, double[] cos, double[] sin, int pos) {
        int half = hd / 2;
        double[] y = new double[hd];
        for (int i = 0; i < half; i++) {
            double c = cos[pos * half + i];
            double s = sin[pos * half + i];
            double a = x[off + i];
            double b = x[off + i + half];
            y[i] = a * c - b * s;
            y[i + half] = b * c + a * s;
        }
        return y;
    }

    /** Result of {@link #qkvRope}: q [n, hq, hd]; k and v per token [n, hk, hd] (what goes into slot slots[t]). */
    public record Qkv(double[] q, double[] k, double[] v) {}

    /** Bias (nullable), per-head RMSNorm of q/k heads (nullable weights), RoPE of q and k; v gets the bias only. */
    public static Qkv qkvRope(
            double[] qkv,
            double[] bias,
            double[] qNorm,
            double[] kNorm,
            double eps,
            double[] cos,
            double[] sin,
            int[] positions,
            int n,
            int hq,
            int hk,
            int hd) {
        int heads = hq + 2 * hk;
        double[] q = new double[n * hq * hd];
        double[] k = new double[n * hk * hd];
        double[] v = new double[n * hk * hd];
        for (int t = 0; t < n; t++) {
            for (int h = 0; h < heads; h++) {
                double[] x = new double[hd];
                for (int e = 0; e < hd; e++) {
                    x[e] = qkv[(t * heads + h) * hd + e] + (bias == null ? 0 : bias[h * hd + e]);
                }
                if (h >= hq + hk) {
                    System.arraycopy(x, 0, v, (t * hk + h - hq - hk) * hd, hd);
                    continue;
                }
                double[] w = h < hq ? qNorm : kNorm;
                if (w != null) {
                    double ss = 0;
                    for (double e : x) {
                        ss += e * e;
                    }
                    double inv = 1 / Math.sqrt(ss / hd + eps);
                    for (int e = 0; e < hd; e++) {
                        x[e] = w[e] * x[e] * inv;
                    }
                }
                double[] y = rope(x, 0, hd, cos, sin, positions[t]);
                if (h < hq) {
                    System.arraycopy(y, 0, q, (t * hq + h) * hd, hd);
                } else {
                    System.arraycopy(y, 0, k, (t * hk + h - hq) * hd, hd);
                }
            }
        }
        return new Qkv(q, k, v);
    }

    /** The cache slot of key j of sequence s. */
    public static int slot(int[] blockTables, int maxBlocksPerSeq, int blockSize, int s, int j) {
        return blockTables[s * maxBlocksPerSeq + j / blockSize] * blockSize + j % blockSize;
    }

    /** Paged causal GQA attention: out[t,h,:] = softmax_j(scale q.k_j) v_j over keys j = 0..tokenPos[t] of tokenSeq[t]. */
    public static double[] attention(
            double[] q,
            double[] kCache,
            double[] vCache,
            int[] blockTables,
            int[] tokenSeq,
            int[] tokenPos,
            int maxBlocksPerSeq,
            int blockSize,
            int n,
            int hq,
            int hk,
            int hd,
            double scale) {
        double[] out = new double[n * hq * hd];
        int group = hq / hk;
        for (int t = 0; t < n; t++) {
            int keys = tokenPos[t] + 1;
            for (int h = 0; h < hq; h++) {
                int kvh = h / group;
                double[] sc = new double[keys];
                double max = Double.NEGATIVE_INFINITY;
                for (int j = 0; j < keys; j++) {
                    int base = (slot(blockTables, maxBlocksPerSeq, blockSize, tokenSeq[t], j) * hk + kvh) * hd;
                    double dot = 0;
                    for (int e = 0; e < hd; e++) {
                        dot += q[(t * hq + h) * hd + e] * kCache[base + e];
                    }
                    sc[j] = scale * dot;
                    max = Math.max(max, sc[j]);
                }
                double sum = 0;
                for (int j = 0; j < keys; j++) {
                    sc[j] = Math.exp(sc[j] - max);
                    sum += sc[j];
                }
                for (int j = 0; j < keys; j++) {
                    int base = (slot(blockTables, maxBlocksPerSeq, blockSize, tokenSeq[t], j) * hk + kvh) * hd;
                    for (int e = 0; e < hd; e++) {
                        out[(t * hq + h) * hd + e] += sc[j] / sum * vCache[base + e];
                    }
                }
            }
        }
        return out;
    }

    /** y[t,o] = sum_k x[t,k] * w[o,k] (x [n, in], w [out, in]: an nn.Linear without bias). */
    public static double[] linear(double[] x, double[] w, int n, int in, int out) {
        double[] y = new double[n * out];
        for (int t = 0; t < n; t++) {
            for (int o = 0; o < out; o++) {
                double acc = 0;
                for (int k = 0; k < in; k++) {
                    acc += x[t * in + k] * w[o * in + k];
                }
                y[t * out + o] = acc;
            }
        }
        return y;
    }

    /** out[i,j] = silu(gateUp[i,j]) * gateUp[i, inter + j]. */
    public static double[] siluMul(double[] gateUp, int n, int inter) {
        double[] out = new double[n * inter];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < inter; j++) {
                double g = gateUp[i * 2 * inter + j];
                out[i * inter + j] = g / (1 + Math.exp(-g)) * gateUp[i * 2 * inter + inter + j];
            }
        }
        return out;
    }

    /** out[i,:] = in[rows[i],:]. */
    public static double[] gatherRows(double[] in, int[] rows, int cols) {
        double[] out = new double[rows.length * cols];
        for (int i = 0; i < rows.length; i++) {
            System.arraycopy(in, rows[i] * cols, out, i * cols, cols);
        }
        return out;
    }

    /** Per row: lowest index of the largest non-NaN value in [0, vocab) (0 when the row has none), as torch.argmax without NaN. */
    public static int[] argmax(float[] logits, int m, int vocab, int stride) {
        int[] out = new int[m];
        for (int i = 0; i < m; i++) {
            int best = -1;
            for (int j = 0; j < vocab; j++) {
                float v = logits[i * stride + j];
                if (!Float.isNaN(v) && (best < 0 || v > logits[i * stride + best])) {
                    best = j;
                }
            }
            out[i] = Math.max(best, 0);
        }
        return out;
    }
}
