package io.tensorlane.runtime.openai;

import java.util.List;

/**
 * Log-probability of one generated token, and the most probable alternatives at that step (most probable first;
 * empty when only the chosen token's logprob was asked for). {@code text} is the token's own decoded text.
 */
public record TokenLogprob(int id, String text, float logprob, List<Alt> top) {
    public TokenLogprob {
        top = top == null ? List.of() : List.copyOf(top);
    }

    /** One alternative token at a step. */
    public record Alt(int id, String text, float logprob) {}
}
