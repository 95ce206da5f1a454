package io.tensorlane.runtime.chat;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Rewrites one JSON object, fed a character at a time, into the text {@link PyJson#dumps} makes of the parsed value
 * ({@code ", "} and {@code ": "} separators, strings re-escaped, numbers as Python writes them): what has been written
 * so far is always a prefix of that final text, so the arguments of a streamed tool call can be sent in pieces that add
 * up to the {@code function.arguments} of the whole answer. Keys are written as they come (a duplicated key, which the
 * whole parse collapses, is the one case where the two differ; the stream's caller checks at the end). A character that
 * cannot continue a JSON object makes the rewriter {@link #failed()}; once the object is complete it is {@link
 * #done()} and takes no more.
 */
final class JsonRewriter {
    private enum Expect {
        VALUE,
        KEY_OR_END,
        KEY,
        COLON,
        COMMA_OR_END,
        VALUE_OR_END
    }

    private final Deque<Character> containers = new ArrayDeque<>();
    private final StringBuilder out = new StringBuilder();
    private final StringBuilder token = new StringBuilder();
    private Expect expect = Expect.VALUE;
    private boolean inString;
    private boolean stringIsKey;
    private int escape = -1; // -1: none; 0: after '\'; 1..4: hex digits of \\u read
    private int hex;
    private boolean failed;
    private boolean done;
    private boolean started;

    /** Feeds one character; false (the character not taken) once the object is complete or when it cannot continue it. */
    boolean feed(char c) {
        if (failed || done) return false;
        if (!started) {
            if (Character.isWhitespace(c)) return true;
            if (c != '{') return fail();
            started = true;
        }
        if (inString) return string(c);
        if (token.length() > 0) {
            if (isLiteralPart(c)) {
                token.append(c);
                return true;
            }
            if (!endToken()) return false;
        }
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
        switch (c) {
            case '{':
            case '[':
                if (expect != Expect.VALUE && expect != Expect.VALUE_OR_END) return fail();
                containers.push(c);
                out.append(c);
                expect = c == '{' ? Expect.KEY_OR_END : Expect.VALUE_OR_END;
                return true;
            case '}':
            case ']':
                boolean object = c == '}';
                if (containers.isEmpty() || containers.peek() != (object ? '{' : '[')) return fail();
                if (expect != Expect.COMMA_OR_END && expect != (object ? Expect.KEY_OR_END : Expect.VALUE_OR_END)) {
                    return fail();
                }
                containers.pop();
                out.append(c);
                valueDone();
                return true;
            case ',':
                if (expect != Expect.COMMA_OR_END) return fail();
                out.append(", ");
                expect = containers.peek() == '{' ? Expect.KEY : Expect.VALUE;
                return true;
            case ':':
                if (expect != Expect.COLON) return fail();
                out.append(": ");
                expect = Expect.VALUE;
                return true;
            case '"':
                if (expect == Expect.KEY || expect == Expect.KEY_OR_END) {
                    stringIsKey = true;
                } else if (expect == Expect.VALUE || expect == Expect.VALUE_OR_END) {
                    stringIsKey = false;
                } else {
                    return fail();
                }
                inString = true;
                out.append('"');
                return true;
            default:
                if (!isLiteralPart(c) || (expect != Expect.VALUE && expect != Expect.VALUE_OR_END)) return fail();
                token.append(c);
                return true;
        }
    }

    private static boolean isLiteralPart(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '-' || c == '+' || c == '.' || c == 'E';
    }

    /** A number or true/false/null ended: writes it as Python does. */
    private boolean endToken() {
        String t = token.toString();
        token.setLength(0);
        String written;
        if (t.equals("true") || t.equals("false") || t.equals("null")) {
            written = t;
        } else if (t.matches("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][-+]?[0-9]+)?")) {
            com.fasterxml.jackson.databind.JsonNode n = ToolCallFormat.Json.read(t);
            if (n == null) return fail();
            written = PyJson.dumps(ToolCallFormat.Json.MAPPER.convertValue(n, Object.class), null, null, false);
        } else {
            return fail();
        }
        out.append(written);
        valueDone();
        return true;
    }

    private boolean string(char c) {
        if (escape == 0) {
            escape = -1;
            char d;
            switch (c) {
                case '"':
                case '\\':
                case '/':
                    d = c;
                    break;
                case 'b':
                    d = '\b';
                    break;
                case 'f':
                    d = '\f';
                    break;
                case 'n':
                    d = '\n';
                    break;
                case 'r':
                    d = '\r';
                    break;
                case 't':
                    d = '\t';
                    break;
                case 'u':
                    escape = 1;
                    hex = 0;
                    return true;
                default:
                    return fail();
            }
            PyJson.escape(out, d);
            return true;
        }
        if (escape > 0) {
            int v = Character.digit(c, 16);
            if (v < 0) return fail();
            hex = hex * 16 + v;
            if (escape++ == 4) {
                escape = -1;
                PyJson.escape(out, (char) hex);
            }
            return true;
        }
        if (c == '\\') {
            escape = 0;
            return true;
        }
        if (c == '"') {
            inString = false;
            out.append('"');
            if (stringIsKey) {
                expect = Expect.COLON;
            } else {
                valueDone();
            }
            return true;
        }
        if (c < 0x20) return fail(); // raw control characters are not JSON
        PyJson.escape(out, c);
        return true;
    }

    private void valueDone() {
        if (containers.isEmpty()) {
            done = true;
        }
        expect = Expect.COMMA_OR_END;
    }

    private boolean fail() {
        failed = true;
        return false;
    }

    /** The rewritten text so far. */
    String written() {
        return out.toString();
    }

    boolean done() {
        return done;
    }

    boolean failed() {
        return failed;
    }
}
