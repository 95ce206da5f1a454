package io.tensorlane.runtime.probe;

/** An expected failure of the probe (no GPU, no NVML, API server refused): one line for the user, an exit code. */
public class ProbeException extends RuntimeException {
  /** No NVML / no GPU on this machine. */
  public static final int NO_GPU = 3;
  /** Publishing to the API server failed. */
  public static final int PUBLISH_FAILED = 4;

  private final int exitCode;

  public ProbeException(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  public int exitCode() {
    return exitCode;
  }
}
