package io.tensorlane.runtime.text;

import java.util.Arrays;

/**
 * Log-probabilities of one step (log-softmax of the raw logits): the chosen token's, and the k most probable tokens in
 * descending order (ties: lower id first).
 */
public record TopLogprobs(int token, float logprob, int[] topIds, float[] topLogprobs) {
    public TopLogprobs {
        if (topIds.length != topLogprobs.length) {
            throw new IllegalArgumentException("topIds and topLogprobs differ in length");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TopLogprobs t
                && token == t.token
                && Float.compare(logprob, t.logprob) == 0
                && Arrays.equals(topIds, t.topIds)
                && Arrays.equals(topLogprobs, t.topLogprobs);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * token + Float.hashCode(logprob)) + Arrays.hashCode(topIds);
    }

    @Override
    public String toString() {
        return "TopLogprobs[token=" + token + ", logprob=" + logprob + ", topIds=" + Arrays.toString(topIds)
                + ", topLogprobs=" + Arrays.toString(topLogprobs) + "]";
    }
}
