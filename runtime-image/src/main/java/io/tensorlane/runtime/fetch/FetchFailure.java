package io.tensorlane.runtime.fetch;

import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.modelfacts.HubException;

/**
 * Why {@code fetch-model} failed: the exit code the init container ends with and the reason in its termination message.
 * The message is one line for a pod log and names what failed; it never holds the token.
 */
public final class FetchFailure extends Exception {
    /** The phase of every fetch-model termination message. */
    public static final String PHASE = "fetch-model";

    /** What went wrong; the numbers are fetch-model's exit codes (the operator reads them). */
    public enum Kind {
        USAGE(2, "InvalidModelSource"),
        NOT_FOUND(4, "ModelNotFound"),
        UNAUTHORIZED(5, "ModelUnauthorized"),
        VERIFICATION(6, "ModelVerificationFailed"),
        IO(7, "ModelDownloadFailed");

        public final int exitCode;
        public final String reason;

        Kind(int exitCode, String reason) {
            this.exitCode = exitCode;
            this.reason = reason;
        }
    }

    private final Kind kind;
    private final boolean retryable;

    public FetchFailure(Kind kind, String message) {
        this(kind, message, false);
    }

    /** {@code retryable}: a server error or rate limit that another attempt may get past. */
    public FetchFailure(Kind kind, String message, boolean retryable) {
        super(message);
        this.kind = kind;
        this.retryable = retryable;
    }

    /** What the Hub answered, as fetch-model ends with it (an answer that is not the Hub API's is an I/O failure). */
    public static FetchFailure of(HubException e) {
        Kind kind = switch (e.kind()) {
            case NOT_FOUND -> Kind.NOT_FOUND;
            case UNAUTHORIZED -> Kind.UNAUTHORIZED;
            case MALFORMED, UNREACHABLE -> Kind.IO;
        };
        return new FetchFailure(kind, e.getMessage(), e.retryable());
    }

    public boolean retryable() {
        return retryable;
    }

    public Kind kind() {
        return kind;
    }

    /** The JSON the runtime writes to its termination-message path (the shape the OOM path uses). */
    public TerminationMessage termination() {
        return new TerminationMessage(kind.reason, PHASE, 0, 0, null, null, null, null, getMessage());
    }
}
