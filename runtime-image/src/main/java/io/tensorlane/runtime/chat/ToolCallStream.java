package io.tensorlane.runtime.chat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Tool-call parsing of a streamed answer, as OpenAI streams calls: {@link #push} each text delta and send what it
 * returns at once; {@link #finish} at the end gives the rest. Content before the first call streams as it comes. A call
 * opens as soon as its object shows {@code {"name": "...", "arguments":} (its first piece carries the call's id and
 * name, arguments ""); its arguments then stream in pieces, rewritten as they come ({@link JsonRewriter}) into the text
 * {@link ToolCallFormat#parse} gives the whole answer's call, so the pieces add up to it.
 *
 * <p>At the end, what was sent is checked against {@code parse} of the whole answer: when it agrees (the usual case,
 * and always for well-formed calls), the finish sends the rest of the content, the rest of each call's arguments and
 * the calls not yet opened, whole. When an opened call turns out malformed (broken JSON, cut by max_tokens, no closing
 * tag), the pieces already sent stay as they are and the content parse makes of the whole answer follows (past what was
 * sent as content). Not thread-safe: one per
 * choice.
 */
public final class ToolCallStream {
    /** One piece of call {@code index}: the first has the id and the name, the others only arguments text. */
    public record CallDelta(int index, String id, String name, String arguments) {}

    /** What one push or the finish sends: content (may be empty) and call pieces (may be none). */
    public record Delta(String content, List<CallDelta> calls) {
        public Delta {
            calls = List.copyOf(calls);
        }

        public boolean isEmpty() {
            return content.isEmpty() && calls.isEmpty();
        }
    }

    private static final Pattern HEADER =
            Pattern.compile("\\G\\s*\\{\\s*\"name\"\\s*:\\s*(\"(?:[^\"\\\\]|\\\\.)*\")\\s*,\\s*\"(\\w+)\"\\s*:");

    private final ToolCallFormat format;
    private final int maxCalls;
    private final Supplier<String> ids;
    private final StringBuilder text = new StringBuilder();
    private final List<Open> opened = new ArrayList<>();
    private int sent;
    private boolean broken;
    private boolean called;

    private static final class Open {
        final String id;
        final String name;
        final JsonRewriter args = new JsonRewriter();
        int pos;
        int sentArgs;

        Open(String id, String name, int pos) {
            this.id = id;
            this.name = name;
            this.pos = pos;
        }
    }

    /**
     * @param maxCalls the most calls reported (1 when the request sets {@code parallel_tool_calls: false})
     * @param ids the id of each new call
     */
    public ToolCallStream(ToolCallFormat format, int maxCalls, Supplier<String> ids) {
        this.format = format;
        this.maxCalls = maxCalls;
        this.ids = ids;
    }

    /** Adds a text delta; returns what can be sent now. */
    public Delta push(String delta) {
        text.append(delta);
        String all = text.toString();
        String content = "";
        if (opened.isEmpty()) {
            int h = Math.max(sent, format.heldFrom(all));
            content = all.substring(sent, h);
            sent = h;
        }
        List<CallDelta> calls = new ArrayList<>();
        while (!broken) {
            Open last = opened.isEmpty() ? null : opened.get(opened.size() - 1);
            if (last != null) {
                feed(last, all, calls);
                if (!last.args.done()) break;
            }
            if (opened.size() >= maxCalls || !open(all, last == null ? -1 : last.pos, calls)) break;
        }
        return new Delta(content, calls);
    }

    /** Opens the next call when its header is complete. */
    private boolean open(String all, int after, List<CallDelta> calls) {
        int start = format.callStart(all, after);
        if (start < 0) return false;
        Matcher m = HEADER.matcher(all);
        if (!m.find(start) || m.start() != start || !format.argumentsKey(m.group(2))) return false;
        JsonNode name = ToolCallFormat.Json.read(m.group(1));
        if (name == null || !name.isTextual()) return false;
        Open o = new Open(ids.get(), name.textValue(), m.end());
        opened.add(o);
        calls.add(new CallDelta(opened.size() - 1, o.id, o.name, ""));
        return true;
    }

    private void feed(Open o, String all, List<CallDelta> calls) {
        while (o.pos < all.length() && o.args.feed(all.charAt(o.pos))) o.pos++;
        if (o.args.failed()) broken = true;
        String w = o.args.written();
        if (w.length() > o.sentArgs) {
            calls.add(new CallDelta(opened.indexOf(o), null, null, w.substring(o.sentArgs)));
            o.sentArgs = w.length();
        }
    }

    /** After {@link #finish}: whether the answer's calls were sent whole (its finish reason is then "tool_calls"). */
    public boolean calledTools() {
        return called;
    }

    /** The end of the answer: the rest of the content and of the calls. */
    public Delta finish() {
        String all = text.toString();
        ToolCallOutput whole = format.parse(all);
        List<ToolCallOutput.Call> want =
                whole.calls().subList(0, Math.min(maxCalls, whole.calls().size()));
        String done = all.substring(0, sent);
        String content = whole.content().startsWith(done) ? whole.content().substring(sent) : all.substring(sent);
        boolean agrees = opened.size() <= want.size();
        for (int i = 0; agrees && i < opened.size(); i++) {
            Open o = opened.get(i);
            agrees = o.name.equals(want.get(i).name())
                    && want.get(i).arguments().startsWith(o.args.written().substring(0, o.sentArgs));
        }
        List<CallDelta> calls = new ArrayList<>();
        if (!agrees) {
            return new Delta(content, calls);
        }
        for (int i = 0; i < want.size(); i++) {
            ToolCallOutput.Call c = want.get(i);
            if (i < opened.size()) {
                String rest = c.arguments().substring(opened.get(i).sentArgs);
                if (!rest.isEmpty()) calls.add(new CallDelta(i, null, null, rest));
            } else {
                opened.add(new Open(ids.get(), c.name(), all.length()));
                calls.add(new CallDelta(i, opened.get(i).id, c.name(), c.arguments()));
            }
        }
        called = !want.isEmpty();
        return new Delta(content, calls);
    }
}
