package io.tensorlane.runtime.text;

import java.util.Arrays;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.random.RandomGenerator;

/**
 * Host-side token sampling over fp32 logits copied from the GPU ({@code logits[offset, offset + vocab)}).
 *
 * <p>Order of the filters, as in vLLM: temperature, top-k, top-p (over the distribution renormalized after top-k),
 * min-p. Cost: O(vocab) for plain temperature sampling and min-p, O(vocab log k) with top-k, O(vocab + m log vocab)
 * for top-p alone where m is the size of the nucleus; the vocabulary is never sorted. Ties between equal logits go to
 * the lower id (as torch.argmax). NaN logits count as -infinity when sampling.
 */
public final class Sampler {
    private Sampler() {}

    /** The generator of one sequence: the same seed gives the same draws (SplittableRandom, in java.base). */
    public static RandomGenerator rngFor(long seed) {
        return new SplittableRandom(seed);
    }

    /** Index of the largest logit, the first one among equals; NaN counts as -infinity. */
    public static int argmax(float[] logits, int offset, int vocab) {
        checkRange(logits, offset, vocab);
        int best = 0;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            float l = logits[offset + i];
            if (l > max) {
                max = l;
                best = i;
            }
        }
        return best;
    }

    /** Draws the next token id in {@code [0, vocab)}. */
    public static int sample(float[] logits, int offset, int vocab, SamplingParams p, RandomGenerator rng) {
        checkRange(logits, offset, vocab);
        Objects.requireNonNull(p, "params");
        if (p.isGreedy()) {
            return argmax(logits, offset, vocab);
        }
        float max = logits[offset + argmax(logits, offset, vocab)];
        if (!(max > Float.NEGATIVE_INFINITY)) { // every logit is -infinity or NaN
            return argmax(logits, offset, vocab);
        }
        double invT = 1.0 / p.temperature();
        int k = p.effectiveTopK();
        if (k > 0 && k < vocab) {
            int[] top = topK(logits, offset, vocab, k);
            return sampleSorted(top, k, logits, offset, max, invT, p.topP(), p.minP(), rng);
        }
        if (p.topP() < 1f) {
            return sampleNucleus(logits, offset, vocab, max, invT, p, rng);
        }
        return sampleAll(logits, offset, vocab, max, invT, p.minP(), rng);
    }

    /**
     * Log-softmax of the raw logits (no temperature, no filters; what vLLM returns by default): the chosen token's
     * logprob and the {@code k} most probable tokens in descending order ({@code k} is clamped to the vocabulary).
     */
    public static TopLogprobs logprobs(float[] logits, int offset, int vocab, int chosen, int k) {
        checkRange(logits, offset, vocab);
        Objects.checkIndex(chosen, vocab);
        if (k < 0) {
            throw new IllegalArgumentException("k must be >= 0, got " + k);
        }
        double max = logits[offset + argmax(logits, offset, vocab)];
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            sum += Math.exp(logits[offset + i] - max);
        }
        double lse = max + Math.log(sum);
        int n = Math.min(k, vocab);
        int[] ids = n == 0 ? new int[0] : topK(logits, offset, vocab, n);
        float[] lps = new float[n];
        for (int i = 0; i < n; i++) {
            lps[i] = (float) (logits[offset + ids[i]] - lse);
        }
        return new TopLogprobs(chosen, (float) (logits[offset + chosen] - lse), ids, lps);
    }

    // --- sampling paths ---------------------------------------------------------------------------------------------

    /** Weight relative to the largest logit: exp((l - max) / T), in (0, 1]; 0 for -infinity and NaN. */
    private static double weight(float l, float max, double invT) {
        return l > Float.NEGATIVE_INFINITY ? Math.exp((l - (double) max) * invT) : 0.0;
    }

    /** No top-k, no top-p: two linear passes (min-p: a token's weight is its probability over the largest one). */
    private static int sampleAll(
            float[] logits, int offset, int vocab, float max, double invT, float minP, RandomGenerator rng) {
        double total = 0;
        for (int i = 0; i < vocab; i++) {
            double w = weight(logits[offset + i], max, invT);
            if (w >= minP) {
                total += w;
            }
        }
        double u = rng.nextDouble() * total;
        double cum = 0;
        int last = -1;
        for (int i = 0; i < vocab; i++) {
            double w = weight(logits[offset + i], max, invT);
            if (w > 0 && w >= minP) {
                cum += w;
                last = i;
                if (cum > u) {
                    return i;
                }
            }
        }
        return last >= 0 ? last : argmax(logits, offset, vocab);
    }

    /** Top-p without top-k: a max-heap over the vocabulary (built in O(vocab)), popped until the nucleus is complete. */
    private static int sampleNucleus(
            float[] logits, int offset, int vocab, float max, double invT, SamplingParams p, RandomGenerator rng) {
        double total = 0;
        int[] heap = new int[vocab];
        for (int i = 0; i < vocab; i++) {
            total += weight(logits[offset + i], max, invT);
            heap[i] = i;
        }
        for (int i = vocab / 2 - 1; i >= 0; i--) {
            siftDown(heap, vocab, i, logits, offset, false);
        }
        int n = vocab;
        int popped = 0;
        double limit = p.topP() * total;
        double cum = 0;
        int[] sorted = new int[Math.min(vocab, 64)];
        while (n > 0) {
            int best = heap[0];
            double w = weight(logits[offset + best], max, invT);
            if (popped > 0 && (w < p.minP() || w == 0)) {
                break;
            }
            if (popped == sorted.length) {
                sorted = Arrays.copyOf(sorted, Math.min(vocab, sorted.length * 2));
            }
            sorted[popped++] = best;
            cum += w;
            heap[0] = heap[--n];
            siftDown(heap, n, 0, logits, offset, false);
            if (cum >= limit) {
                break;
            }
        }
        return sampleSorted(sorted, popped, logits, offset, max, invT, 1f, 0f, rng); // already filtered
    }

    /**
     * Samples from {@code ids[0, n)}, sorted by descending logit, after top-p (renormalized over these ids) and min-p, each
     * of which keeps a prefix of at least one id.
     */
    private static int sampleSorted(
            int[] ids,
            int n,
            float[] logits,
            int offset,
            float max,
            double invT,
            float topP,
            float minP,
            RandomGenerator rng) {
        int keep = n;
        if (topP < 1f || minP > 0f) {
            double total = 0;
            for (int i = 0; i < n; i++) {
                total += weight(logits[offset + ids[i]], max, invT);
            }
            double limit = topP * total;
            double cum = 0;
            for (int i = 0; i < n; i++) {
                double w = weight(logits[offset + ids[i]], max, invT);
                if (i > 0 && (w < minP || w == 0)) {
                    keep = i;
                    break;
                }
                cum += w;
                if (topP < 1f && cum >= limit) {
                    keep = i + 1;
                    break;
                }
            }
        }
        double total = 0;
        for (int i = 0; i < keep; i++) {
            total += weight(logits[offset + ids[i]], max, invT);
        }
        double u = rng.nextDouble() * total;
        double cum = 0;
        for (int i = 0; i < keep; i++) {
            cum += weight(logits[offset + ids[i]], max, invT);
            if (cum > u) {
                return ids[i];
            }
        }
        return ids[0];
    }

    // --- selection --------------------------------------------------------------------------------------------------

    /** The k best ids (higher logit, then lower id) in descending order: a size-k min-heap, O(vocab log k). */
    static int[] topK(float[] logits, int offset, int vocab, int k) {
        int[] heap = new int[k];
        for (int i = 0; i < k; i++) {
            heap[i] = i;
        }
        for (int i = k / 2 - 1; i >= 0; i--) {
            siftDown(heap, k, i, logits, offset, true);
        }
        for (int i = k; i < vocab; i++) {
            if (better(i, heap[0], logits, offset)) {
                heap[0] = i;
                siftDown(heap, k, 0, logits, offset, true);
            }
        }
        // Heap sort: the worst goes to the end, leaving the array best first.
        for (int n = k - 1; n > 0; n--) {
            int worst = heap[0];
            heap[0] = heap[n];
            heap[n] = worst;
            siftDown(heap, n, 0, logits, offset, true);
        }
        return heap;
    }

    private static float key(float l) {
        return l > Float.NEGATIVE_INFINITY ? l : Float.NEGATIVE_INFINITY;
    }

    /** Whether id a ranks before id b: larger logit, or equal logits and lower id. */
    private static boolean better(int a, int b, float[] logits, int offset) {
        float la = key(logits[offset + a]);
        float lb = key(logits[offset + b]);
        return la > lb || (la == lb && a < b);
    }

    /** minHeap: the root is the worst element; else the root is the best. */
    private static void siftDown(int[] heap, int n, int pos, float[] logits, int offset, boolean minHeap) {
        int item = heap[pos];
        while (true) {
            int child = 2 * pos + 1;
            if (child >= n) {
                break;
            }
            int right = child + 1;
            if (right < n
                    && (minHeap
                            ? better(heap[child], heap[right], logits, offset)
                            : better(heap[right], heap[child], logits, offset))) {
                child = right;
            }
            boolean swap =
                    minHeap ? better(item, heap[child], logits, offset) : better(heap[child], item, logits, offset);
            if (!swap) {
                break;
            }
            heap[pos] = heap[child];
            pos = child;
        }
        heap[pos] = item;
    }

    private static void checkRange(float[] logits, int offset, int vocab) {
        Objects.requireNonNull(logits, "logits");
        if (vocab <= 0) {
            throw new IllegalArgumentException("vocab must be > 0, got " + vocab);
        }
        Objects.checkFromIndexSize(offset, vocab, logits.length);
    }
}
