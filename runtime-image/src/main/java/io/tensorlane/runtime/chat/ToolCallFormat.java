package io.tensorlane.runtime.chat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A model family's way of writing tool calls into its answer. {@link #parse} takes a whole answer apart; malformed
 * calls stay text. {@link #heldFrom} is what streaming needs: where in a partial answer a call may begin, so that the
 * text before it can be sent as content at once whatever follows ({@link ToolCallStream}).
 */
public interface ToolCallFormat {
    /** The whole answer's content and calls. */
    ToolCallOutput parse(String text);

    /**
     * An index h such that {@code text[0, h)} is content in {@code parse(text + s)} for every continuation s, and that
     * never decreases as the text grows.
     */
    int heldFrom(String text);

    /**
     * Where in a partial answer the object of the next call begins (its '{' may still be preceded by whitespace), for
     * streaming a call while it is written: {@code after} is -1 for the first call, else the index just past the
     * previous call's arguments object. -1 when the text does not (yet) show one there.
     */
    int callStart(String text, int after);

    /**
     * Whether the answer must be decoded with its special tokens for the calls to parse (Mistral's {@code [TOOL_CALLS]}
     * is a control token; vLLM turns skip_special_tokens off for it the same way).
     */
    default boolean keepsSpecialTokens() {
        return false;
    }

    /** A new call id: {@code call_} and 24 letters or digits (Mistral's format: 9, as its templates require). */
    default String newId() {
        return "call_" + randomId(24);
    }

    static String randomId(int n) {
        String abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        java.util.concurrent.ThreadLocalRandom r = java.util.concurrent.ThreadLocalRandom.current();
        StringBuilder b = new StringBuilder(n);
        for (int i = 0; i < n; i++) b.append(abc.charAt(r.nextInt(abc.length())));
        return b.toString();
    }

    /** Whether the call object may carry its arguments under {@code key}. */
    default boolean argumentsKey(String key) {
        return "arguments".equals(key);
    }

    /** The formats by vLLM's parser names: {@code hermes} (Qwen2.5, Qwen3), {@code llama3_json}, {@code mistral}. */
    static ToolCallFormat named(String name) {
        switch (name) {
            case "hermes":
                return new TaggedToolCalls("<tool_call>", "</tool_call>", false);
            case "mistral":
                return new TaggedToolCalls("[TOOL_CALLS]", null, true);
            case "llama3_json":
                return new LlamaJsonToolCalls();
            default:
                throw new IllegalArgumentException(
                        "unknown tool-call format '" + name + "' (hermes, llama3_json, mistral)");
        }
    }

    /** A call object {"name": string, ARGS: object} (ARGS being one of the given keys, absent meaning {}), or null. */
    static ToolCallOutput.Call call(JsonNode n, String... argumentKeys) {
        if (n == null || !n.isObject() || !n.path("name").isTextual()) return null;
        JsonNode args = null;
        for (String k : argumentKeys) {
            if (n.has(k)) {
                args = n.get(k);
                break;
            }
        }
        if (args == null) args = Json.MAPPER.createObjectNode();
        if (!args.isObject()) return null;
        return new ToolCallOutput.Call(
                n.get("name").textValue(),
                PyJson.dumps(Json.MAPPER.convertValue(args, Object.class), null, null, false));
    }

    /**
     * The index after {@code sep} when {@code text[from, ...)} is whitespace, '}' (the end of the previous call object),
     * whitespace, {@code sep}; -1 otherwise.
     */
    static int afterSeparator(String text, int from, char sep) {
        int i = skipSpace(text, from);
        if (i >= text.length() || text.charAt(i) != '}') return -1;
        i = skipSpace(text, i + 1);
        return i < text.length() && text.charAt(i) == sep ? i + 1 : -1;
    }

    static int skipSpace(String text, int i) {
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) i++;
        return i;
    }

    /** The end of the text once a trailing run of whitespace and a trailing proper prefix of {@code marker} are cut. */
    static int beforePartial(String text, String marker) {
        int end = text.length();
        for (int k = Math.min(marker.length() - 1, text.length()); k > 0; k--) {
            if (text.endsWith(marker.substring(0, k))) {
                end = text.length() - k;
                break;
            }
        }
        while (end > 0 && Character.isWhitespace(text.charAt(end - 1))) end--;
        return end;
    }

    /** The JSON mapper of the parsers. */
    final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper()
                .enable(com.fasterxml.jackson.databind.DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

        /** The JSON value of the whole text, or null when it is not exactly one. */
        static JsonNode read(String text) {
            try {
                return MAPPER.readTree(text);
            } catch (java.io.IOException e) {
                return null;
            }
        }

        private Json() {}
    }
}
