package io.tensorlane.modelfacts;

/**
 * A Hub call that the Hub answered with a failure, by kind; the message names the model, revision or file and the
 * endpoint, never the token. (A connection that fails is an {@link java.io.IOException} of the call instead.)
 */
public final class HubException extends RuntimeException {
    /** What went wrong. */
    public enum Kind {
        /** 404: no such model, revision or file. */
        NOT_FOUND,
        /** 401/403: gated or private, or a token that is not accepted. */
        UNAUTHORIZED,
        /** An answer that is not what the Hub API promises (or a status no other kind covers). */
        MALFORMED,
        /** 5xx, 408 or 429: worth another attempt. */
        UNREACHABLE
    }

    private final Kind kind;

    public HubException(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    public Kind kind() {
        return kind;
    }

    /** Whether another attempt may get past it (server errors, rate limits, time-outs). */
    public boolean retryable() {
        return kind == Kind.UNREACHABLE;
    }
}
