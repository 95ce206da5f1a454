package io.tensorlane.runtime.openai;

import java.util.List;

/**
 * Log-probability of one token, and the most probable alternatives at that step (most probable first; empty when only
 * the chosen token's logprob was asked for). {@code text} is the token's own decoded text. {@code scored} is false for
 * the one token nothing scores: the first token of an echoed prompt (no tokens before it), which the legacy completions
 * logprobs list with a {@code null} logprob and {@code null} alternatives, as vLLM does.
 */
public record TokenLogprob(int id, String text, float logprob, List<Alt> top, boolean scored) {
    public TokenLogprob {
        top = top == null ? List.of() : List.copyOf(top);
    }

    /** A scored token. */
    public TokenLogprob(int id, String text, float logprob, List<Alt> top) {
        this(id, text, logprob, top, true);
    }

    /** The first token of a prompt: listed, not scored. */
    public static TokenLogprob unscored(int id, String text) {
        return new TokenLogprob(id, text, Float.NaN, List.of(), false);
    }

    /** One alternative token at a step. */
    public record Alt(int id, String text, float logprob) {}
}
