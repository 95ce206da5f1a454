package io.tensorlane.runtime.probe;

import io.tensorlane.runtime.common.ExitCodes;

/** An expected failure of the probe (no GPU, no NVML, API server refused): one line for the user, no stack trace. */
public class ProbeException extends RuntimeException {
    /** What went wrong; the CLI exits with {@link ExitCodes#RUNTIME} for both. */
    public enum Kind {
        /** No NVML / no GPU on this machine: probing again will not help. */
        NO_GPU,
        /** Publishing to the API server failed: the next round may succeed. */
        PUBLISH_FAILED
    }

    private final Kind kind;

    public ProbeException(Kind kind, String message) {
        super(message, null, false, false);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }
}
