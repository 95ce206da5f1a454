package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.TopLogprobs;

/**
 * Receives one sequence's tokens. Both methods are called on the scheduler thread, between steps: they must not block
 * (hand the token to a queue or a non-blocking writer) — every running sequence waits while they run. A listener that
 * throws from {@link #onToken} ends its sequence with {@link FinishReason#ERROR}.
 */
public interface SequenceListener {
    /**
     * A new token (never repeated, also after a preemption). The token that ends the sequence (EOS, a stop id) is
     * delivered too, before {@link #onFinish}. {@code logprobs} is null unless the request asked for them.
     *
     * @return false to finish the sequence now with {@link FinishReason#STOP} (a stop string matched)
     */
    boolean onToken(int token, TopLogprobs logprobs);

    /**
     * The sequence's first admission to a step: {@code cachedTokens} of its prompt tokens were taken from the prefix
     * cache (0 with the cache off or on a miss). Called once, before the first {@link #onToken}.
     */
    default void onAdmitted(int cachedTokens) {}

    /**
     * The prompt's logprobs, when the request asked for them ({@link SeqRequest#promptLogprobs}): entry {@code i} is
     * prompt token {@code i + 1}'s given the tokens before it (the first token has none, so the list is one shorter than
     * the prompt). Called once, just before the first {@link #onToken}.
     */
    default void onPromptLogprobs(java.util.List<TopLogprobs> logprobs) {}

    /** Called exactly once, last. Token counts: the prompt's, and the tokens given to {@link #onToken}. */
    void onFinish(FinishReason reason, int promptTokens, int completionTokens);
}
