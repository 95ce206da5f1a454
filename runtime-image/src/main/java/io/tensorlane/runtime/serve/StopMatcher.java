package io.tensorlane.runtime.serve;

import java.util.List;

/**
 * Stop strings over streamed text: text is released as soon as it cannot be the start of a stop string; when one
 * matches, the output ends before it (or after it with {@code includeStop}). Pure, one per choice, not thread-safe.
 */
final class StopMatcher {
    private final List<String> stops;
    private final boolean includeStop;
    private final int holdBack;
    private final StringBuilder text = new StringBuilder();
    private int released;
    private String matched;

    StopMatcher(List<String> stops, boolean includeStop) {
        this.stops = stops == null
                ? List.of()
                : stops.stream().filter(s -> !s.isEmpty()).toList();
        this.includeStop = includeStop;
        this.holdBack = this.stops.stream().mapToInt(String::length).max().orElse(1) - 1;
    }

    /** Adds decoded text; returns what may be sent now. After a match, {@link #matched()} is set and nothing more comes. */
    String add(String delta) {
        if (matched != null) {
            return "";
        }
        int searchFrom = Math.max(0, text.length() - holdBack);
        text.append(delta);
        int best = -1;
        String which = null;
        for (String s : stops) {
            int i = text.indexOf(s, searchFrom);
            if (i >= 0 && (best < 0 || i < best)) {
                best = i;
                which = s;
            }
        }
        if (which != null) {
            matched = which;
            int end = includeStop ? best + which.length() : best;
            String out = end > released ? text.substring(released, end) : "";
            released = Math.max(released, end);
            return out;
        }
        int safe = stops.isEmpty() ? text.length() : Math.max(released, text.length() - holdBack);
        String out = text.substring(released, safe);
        released = safe;
        return out;
    }

    /** The text held back at the end (no stop matched). */
    String flush() {
        if (matched != null) {
            return "";
        }
        String out = text.substring(released);
        released = text.length();
        return out;
    }

    /** The stop string that ended the output, or null. */
    String matched() {
        return matched;
    }
}
