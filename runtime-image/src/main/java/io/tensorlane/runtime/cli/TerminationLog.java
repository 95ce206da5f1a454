package io.tensorlane.runtime.cli;

import io.tensorlane.kernels.TerminationMessage;
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
    String env = System.getenv(ENV);
    return env != null && !env.isBlank() ? Path.of(env) : DEFAULT;
  }

  /**
   * Writes {@code msg} to {@code file} when the file exists or its folder does (Kubernetes creates
   * /dev/termination-log; outside a pod nothing is created in /dev), and always to {@code err}.
   */
  public static void write(Path file, TerminationMessage msg, PrintWriter err) {
    String json = msg.toJson();
    err.println(json);
    err.flush();
    boolean writable = Files.exists(file) || (!file.startsWith("/dev") && file.getParent() != null && Files.isDirectory(file.getParent()));
    if (writable) {
      try {
        Files.writeString(file, json);
      } catch (IOException e) {
        err.println("cannot write termination message to " + file + ": " + e.getMessage());
      }
    }
  }
}
