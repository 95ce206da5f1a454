package io.tensorlane.runtime.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Tool calls behind a marker. Hermes style (Qwen2.5, Qwen3): each call is {@code <tool_call>{"name": ..., "arguments":
 * {...}}</tool_call>}, anywhere in the answer, as many as written; the text around them is content. Mistral style
 * ({@code arrayAfter}): {@code [TOOL_CALLS]} followed by a JSON array of {@code {"name", "arguments"}} that runs to the
 * end of the answer; the text before the marker is content. A block whose JSON is not such a call (or a Mistral array
 * with anything after it) stays in the content as written; content that is only whitespace next to calls is "".
 */
final class TaggedToolCalls implements ToolCallFormat {
    private final String start;
    private final String end;
    private final boolean arrayAfter;

    TaggedToolCalls(String start, String end, boolean arrayAfter) {
        this.start = start;
        this.end = end;
        this.arrayAfter = arrayAfter;
    }

    @Override
    public ToolCallOutput parse(String text) {
        return arrayAfter ? parseArray(text) : parseBlocks(text);
    }

    private ToolCallOutput parseBlocks(String text) {
        StringBuilder content = new StringBuilder();
        List<ToolCallOutput.Call> calls = new ArrayList<>();
        int i = 0;
        while (true) {
            int s = text.indexOf(start, i);
            int e = s < 0 ? -1 : text.indexOf(end, s + start.length());
            if (e < 0) break;
            ToolCallOutput.Call c = ToolCallFormat.call(
                    ToolCallFormat.Json.read(
                            text.substring(s + start.length(), e).strip()),
                    "arguments");
            if (c == null) {
                content.append(text, i, e + end.length());
            } else {
                content.append(text, i, s);
                calls.add(c);
            }
            i = e + end.length();
        }
        content.append(text.substring(i));
        return result(content.toString(), calls);
    }

    private ToolCallOutput parseArray(String text) {
        int s = text.indexOf(start);
        if (s < 0) return ToolCallOutput.text(text);
        JsonNode array =
                ToolCallFormat.Json.read(text.substring(s + start.length()).strip());
        if (array == null || !array.isArray() || array.isEmpty()) return ToolCallOutput.text(text);
        List<ToolCallOutput.Call> calls = new ArrayList<>();
        for (JsonNode n : array) {
            ToolCallOutput.Call c = ToolCallFormat.call(n, "arguments");
            if (c == null) return ToolCallOutput.text(text);
            calls.add(c);
        }
        return result(text.substring(0, s), calls);
    }

    private static ToolCallOutput result(String content, List<ToolCallOutput.Call> calls) {
        return new ToolCallOutput(!calls.isEmpty() && content.isBlank() ? "" : content, calls);
    }

    @Override
    public boolean keepsSpecialTokens() {
        return arrayAfter;
    }

    @Override
    public String newId() {
        return arrayAfter ? ToolCallFormat.randomId(9) : ToolCallFormat.super.newId();
    }

    @Override
    public int callStart(String text, int after) {
        if (!arrayAfter) {
            int s = text.indexOf(start, Math.max(0, after));
            return s < 0 ? -1 : s + start.length();
        }
        if (after >= 0) return ToolCallFormat.afterSeparator(text, after, ',');
        int s = text.indexOf(start);
        if (s < 0) return -1;
        int i = ToolCallFormat.skipSpace(text, s + start.length());
        return i < text.length() && text.charAt(i) == '[' ? i + 1 : -1;
    }

    @Override
    public int heldFrom(String text) {
        int s = text.indexOf(start);
        return ToolCallFormat.beforePartial(s < 0 ? text : text.substring(0, s), start);
    }
}
