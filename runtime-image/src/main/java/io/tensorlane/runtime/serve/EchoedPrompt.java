package io.tensorlane.runtime.serve;

/**
 * A completions prompt whose text starts its choices' text ({@code echo: true}).
 *
 * @param text the prompt's text (a token-id prompt's decoded text)
 * @param ids its token ids
 * @param offsets where each token starts in {@code text} ({@link TokenTexts#offsets}), null when no logprobs are asked
 */
record EchoedPrompt(String text, int[] ids, int[] offsets) {
    EchoedPrompt {
        if (offsets != null && offsets.length != ids.length) {
            throw new IllegalArgumentException("an offset per token");
        }
    }
}
