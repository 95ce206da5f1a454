package io.tensorlane.operator.model;

/** A Hub call that failed, by kind; the message names the model, revision or file and never the token. */
public final class HubException extends RuntimeException {
  /** What went wrong. */
  public enum Kind {
    /** 404: no such model, revision or file. */
    NOT_FOUND,
    /** 401/403: gated or private, or a token that is not accepted. */
    UNAUTHORIZED,
    /** An answer that is not what the Hub API promises. */
    MALFORMED,
    /** Network error, time-out, 5xx or 429: worth retrying. */
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
}
