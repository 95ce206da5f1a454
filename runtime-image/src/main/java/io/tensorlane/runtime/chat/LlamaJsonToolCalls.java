package io.tensorlane.runtime.chat;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Llama 3.x JSON tool calls (vLLM's {@code llama3_json}): the whole answer, optionally after {@code <|python_tag|>},
 * is one or more {@code {"name": ..., "parameters": {...}}} objects ({@code "arguments"} also read) separated by
 * {@code ;}. Anything else, including JSON that is not such a call, is content as written.
 */
final class LlamaJsonToolCalls implements ToolCallFormat {
    static final String PYTHON_TAG = "<|python_tag|>";
    /** Reads one value and leaves what follows it (the shared mapper refuses trailing content). */
    private static final ObjectMapper ONE_VALUE = new ObjectMapper();

    @Override
    public ToolCallOutput parse(String text) {
        String s = text.strip();
        if (s.startsWith(PYTHON_TAG)) s = s.substring(PYTHON_TAG.length()).strip();
        List<ToolCallOutput.Call> calls = new ArrayList<>();
        while (!s.isEmpty()) {
            JsonNode n;
            int used;
            try (JsonParser p = ONE_VALUE.createParser(s)) {
                n = p.readValueAsTree();
                used = (int) p.currentLocation().getCharOffset();
            } catch (IOException e) {
                return ToolCallOutput.text(text);
            }
            ToolCallOutput.Call c = ToolCallFormat.call(n, "parameters", "arguments");
            if (c == null) return ToolCallOutput.text(text);
            calls.add(c);
            s = s.substring(used).strip();
            if (s.startsWith(";")) {
                s = s.substring(1).strip();
                if (s.isEmpty()) return ToolCallOutput.text(text);
            } else if (!s.isEmpty()) {
                return ToolCallOutput.text(text);
            }
        }
        return calls.isEmpty() ? ToolCallOutput.text(text) : new ToolCallOutput("", calls);
    }

    @Override
    public int callStart(String text, int after) {
        if (after >= 0) return ToolCallFormat.afterSeparator(text, after, ';');
        int i = ToolCallFormat.skipSpace(text, 0);
        if (text.startsWith(PYTHON_TAG, i)) return i + PYTHON_TAG.length();
        return i < text.length() && text.charAt(i) == '{' ? i : -1;
    }

    @Override
    public boolean argumentsKey(String key) {
        return "parameters".equals(key) || "arguments".equals(key);
    }

    /** Nothing is sent while the answer may still be calls: it is blank, or starts with '{' or the python tag. */
    @Override
    public int heldFrom(String text) {
        String s = text.stripLeading();
        boolean maybeCall = s.isEmpty() || s.startsWith("{") || s.startsWith(PYTHON_TAG) || PYTHON_TAG.startsWith(s);
        return maybeCall ? 0 : text.length();
    }
}
