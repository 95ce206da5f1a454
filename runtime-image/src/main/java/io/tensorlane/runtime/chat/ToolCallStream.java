package io.tensorlane.runtime.chat;

import java.util.List;

/**
 * Tool-call parsing of a streamed answer: {@link #push} each text delta and send what it returns as content at once;
 * {@link #finish} at the end gives the rest of the content and the calls. Whatever the deltas, the content sent plus
 * the finish's content and the finish's calls are what {@link ToolCallFormat#parse} makes of the whole answer. Calls
 * are reported whole at the end (no partial arguments). Not thread-safe: one per choice.
 */
public final class ToolCallStream {
    private final ToolCallFormat format;
    private final StringBuilder text = new StringBuilder();
    private int sent;

    public ToolCallStream(ToolCallFormat format) {
        this.format = format;
    }

    /** Adds a delta; returns the content that can be sent now (may be empty). */
    public String push(String delta) {
        text.append(delta);
        String all = text.toString();
        int h = Math.max(sent, format.heldFrom(all));
        String out = all.substring(sent, h);
        sent = h;
        return out;
    }

    /** The end of the answer: the content not yet sent, and the calls. */
    public ToolCallOutput finish() {
        String all = text.toString();
        ToolCallOutput whole = format.parse(all);
        if (!whole.content().startsWith(all.substring(0, sent))) {
            // heldFrom's contract broken: send the rest as text rather than lose or repeat any of it
            return new ToolCallOutput(all.substring(sent), List.of());
        }
        return new ToolCallOutput(whole.content().substring(sent), whole.calls());
    }
}
