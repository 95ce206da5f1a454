package io.tensorlane.runtime.common;

import io.tensorlane.contract.TerminationMessage;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes the JSON termination message where Kubernetes reads it, and to stderr. */
public final class TerminationLog {
    public static final String ENV = "TENSORLANE_TERMINATION_LOG";
    public static final Path DEFAULT = Path.of("/dev/termination-log");

    private TerminationLog() {}

    /** {@value #ENV} when set, else /dev/termination-log. */
    public static Path path() {
        return path(System.getenv());
    }

    /** {@value #ENV} in {@code env} when set, else /dev/termination-log. */
    public static Path path(java.util.Map<String, String> env) {
        String v = env.get(ENV);
        return v != null && !v.isBlank() ? Path.of(v) : DEFAULT;
    }

    /**
     * Writes {@code msg} to {@code file} when the file exists or its folder does (Kubernetes creates
     * /dev/termination-log; outside a pod nothing is created in /dev), and always to {@code err}.
     */
    public static void write(Path file, TerminationMessage msg, PrintWriter err) {
        String json = msg.toJson();
        err.println(json);
        err.flush();
        writeFile(file, json, err);
    }

    /** Writes {@code json} to {@code file} only (same rule as {@link #write}); a failure to write goes to {@code err}. */
    public static void writeFile(Path file, String json, PrintWriter err) {
        boolean writable = Files.exists(file)
                || (!file.startsWith("/dev") && file.getParent() != null && Files.isDirectory(file.getParent()));
        if (writable) {
            try {
                Files.writeString(file, json);
            } catch (IOException e) {
                err.println("cannot write termination message to " + file + ": " + e.getMessage());
            }
        }
    }
}
