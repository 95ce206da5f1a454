package io.tensorlane.runtime.chat;

/**
 * Where a left-to-right scan of template expression text stands: inside a quoted string or not, and how deep inside
 * {@code ( [ {}. The rewrites of {@link ChatTemplate} and {@link JinjaCompat} look for commas and keywords at one depth.
 */
final class Brackets {
    private int depth;
    private char quote;

    Brackets(int depth) {
        this.depth = depth;
    }

    /** Takes the next character; true when it stands outside a string (an opening or closing quote does not). */
    boolean next(char c) {
        if (quote != 0) {
            if (c == quote) quote = 0;
            return false;
        }
        if (c == '\'' || c == '"') {
            quote = c;
            return false;
        }
        if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            depth--;
        }
        return true;
    }

    int depth() {
        return depth;
    }
}
