package io.tensorlane.runtime.loadgen;

import java.util.ArrayList;
import java.util.List;

/**
 * Server-Sent Events framing (the subset the OpenAI streaming API uses): {@code data:} lines (one optional space after
 * the colon) are buffered and joined with {@code \n} until a blank line dispatches the event; comments ({@code :...})
 * and the {@code event:}, {@code id:} and {@code retry:} fields are ignored. {@link #feed} takes raw text in arbitrary
 * pieces (a line may be split across network reads; {@code \n}, {@code \r\n} and {@code \r} end lines); {@link #line}
 * takes one complete line. {@link #finish} dispatches a last event that the server did not end with a blank line.
 * Not thread-safe.
 */
public final class SseParser {
    private final StringBuilder partial = new StringBuilder();
    private final StringBuilder data = new StringBuilder();
    private boolean hasData;
    private boolean pendingCr;

    /** Raw text as it arrives; returns the data of the events completed by it. */
    public List<String> feed(CharSequence text) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (pendingCr) {
                pendingCr = false;
                if (c == '\n') {
                    continue;
                }
            }
            if (c == '\r' || c == '\n') {
                pendingCr = c == '\r';
                String ev = line(partial.toString());
                partial.setLength(0);
                if (ev != null) {
                    out.add(ev);
                }
            } else {
                partial.append(c);
            }
        }
        return out;
    }

    /** One complete line without its terminator; returns the event's data when the line ends an event, else null. */
    public String line(String line) {
        if (line.isEmpty()) {
            return dispatch();
        }
        if (line.startsWith(":")) {
            return null;
        }
        int colon = line.indexOf(':');
        String field = colon < 0 ? line : line.substring(0, colon);
        if (!field.equals("data")) {
            return null;
        }
        String value = colon < 0 ? "" : line.substring(colon + 1);
        if (value.startsWith(" ")) {
            value = value.substring(1);
        }
        if (hasData) {
            data.append('\n');
        }
        data.append(value);
        hasData = true;
        return null;
    }

    /** End of stream: the pending event (a partial last line included), or null. */
    public String finish() {
        if (partial.length() > 0) {
            line(partial.toString());
            partial.setLength(0);
        }
        return dispatch();
    }

    private String dispatch() {
        if (!hasData) {
            return null;
        }
        String d = data.toString();
        data.setLength(0);
        hasData = false;
        return d;
    }
}
