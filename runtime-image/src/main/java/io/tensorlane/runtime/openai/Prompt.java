package io.tensorlane.runtime.openai;

import java.util.List;

/** One completions prompt: text to tokenize, or token ids given by the client (exactly one is non-null). */
public record Prompt(String text, List<Integer> ids) {
    public Prompt {
        if ((text == null) == (ids == null)) {
            throw new IllegalArgumentException("a prompt is either text or token ids");
        }
        ids = ids == null ? null : List.copyOf(ids);
    }

    public static Prompt ofText(String text) {
        return new Prompt(text, null);
    }

    public static Prompt ofIds(List<Integer> ids) {
        return new Prompt(null, ids);
    }

    public boolean isText() {
        return text != null;
    }
}
