package io.tensorlane.contract;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The machine-readable progress line of the runtime's {@code fetch-model} init step, one line on its stdout next to the
 * human lines, e.g.
 * <pre>tensorlane-fetch-progress model=org/name@0123abcd state=running done=3200000000 total=16100000000 files=1/4</pre>
 * The runtime prints it; the operator reads the init container's log (pods/log) and shows the last one in the
 * InferenceDeployment's status. One definition, so the two cannot drift apart.
 *
 * @param model     {@code org/name@commit}
 * @param state     {@link #RUNNING} or {@link #COMPLETE}
 * @param doneBytes bytes on disk (resumed parts included)
 * @param totalBytes bytes of every selected file (0 when the Hub does not list sizes)
 * @param filesDone files complete
 * @param files     files selected
 */
public record FetchProgress(String model, String state, long doneBytes, long totalBytes, int filesDone, int files) {
    public static final String PREFIX = "tensorlane-fetch-progress ";
    public static final String RUNNING = "running";
    public static final String COMPLETE = "complete";

    public FetchProgress {
        if (model == null || model.isBlank() || model.chars().anyMatch(Character::isWhitespace)) {
            throw new IllegalArgumentException(
                    "fetch progress: model must be org/name@commit without spaces, got '" + model + "'");
        }
        if (!RUNNING.equals(state) && !COMPLETE.equals(state)) {
            throw new IllegalArgumentException(
                    "fetch progress: state must be " + RUNNING + " or " + COMPLETE + ", got '" + state + "'");
        }
        if (doneBytes < 0 || totalBytes < 0 || filesDone < 0 || files < 0 || filesDone > files) {
            throw new IllegalArgumentException(
                    "fetch progress: byte and file counts must be >= 0 and files done <= files, got done=" + doneBytes
                            + " total=" + totalBytes + " files=" + filesDone + "/" + files);
        }
    }

    /** The line the runtime prints (no line break). */
    public String toLine() {
        return PREFIX + "model=" + model + " state=" + state + " done=" + doneBytes + " total=" + totalBytes + " files="
                + filesDone + "/" + files;
    }

    /** Whole percent of the bytes, 0..100 (100 once complete; 0 while the total is unknown). */
    public int percent() {
        if (COMPLETE.equals(state)) {
            return 100;
        }
        return totalBytes <= 0 ? 0 : (int) Math.min(100, doneBytes * 100 / totalBytes);
    }

    public boolean complete() {
        return COMPLETE.equals(state);
    }

    /** "3.2 of 16.1 GB (20%)" (decimal units, as download sizes are usually shown). */
    public String describe() {
        if (totalBytes <= 0) {
            return gb(doneBytes) + " GB (total unknown)";
        }
        return gb(doneBytes) + " of " + gb(totalBytes) + " GB (" + percent() + "%)";
    }

    private static String gb(long bytes) {
        return String.format(Locale.ROOT, "%.1f", bytes / 1e9);
    }

    /**
     * The progress of one log line: empty when the line is not a progress line (any other output); a line that starts
     * with {@link #PREFIX} but is malformed is an {@link IllegalArgumentException} naming what is wrong.
     */
    public static Optional<FetchProgress> parse(String line) {
        if (line == null) {
            return Optional.empty();
        }
        String l = line.strip();
        if (!l.startsWith(PREFIX.strip())) {
            return Optional.empty();
        }
        Map<String, String> kv = new LinkedHashMap<>();
        for (String part : l.substring(PREFIX.strip().length()).trim().split("\\s+")) {
            int eq = part.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("fetch progress line: '" + part + "' is not key=value in: " + l);
            }
            kv.put(part.substring(0, eq), part.substring(eq + 1));
        }
        for (String key : new String[] {"model", "state", "done", "total", "files"}) {
            if (!kv.containsKey(key)) {
                throw new IllegalArgumentException("fetch progress line: missing " + key + "= in: " + l);
            }
        }
        String[] files = kv.get("files").split("/", -1);
        if (files.length != 2) {
            throw new IllegalArgumentException(
                    "fetch progress line: files= must be DONE/TOTAL, got '" + kv.get("files") + "'");
        }
        return Optional.of(new FetchProgress(
                kv.get("model"),
                kv.get("state"),
                number(kv, "done", kv.get("done")),
                number(kv, "total", kv.get("total")),
                (int) number(kv, "files", files[0]),
                (int) number(kv, "files", files[1])));
    }

    /** The last well-formed progress line of a log excerpt (a tail may begin with a cut line), or empty. */
    public static Optional<FetchProgress> last(String log) {
        if (log == null) {
            return Optional.empty();
        }
        String[] lines = log.split("\\R");
        for (int i = lines.length - 1; i >= 0; i--) {
            try {
                Optional<FetchProgress> p = parse(lines[i]);
                if (p.isPresent()) {
                    return p;
                }
            } catch (IllegalArgumentException e) {
                // a cut or foreign line: keep looking further up
            }
        }
        return Optional.empty();
    }

    private static long number(Map<String, String> kv, String key, String v) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "fetch progress line: " + key + "= must be a whole number, got '" + v + "'");
        }
    }
}
