package io.tensorlane.runtime.sched;

/** The waiting queue is full; the HTTP layer answers 429 with {@code Retry-After: retryAfterSeconds()}. */
public final class QueueFullException extends RuntimeException {
    private final int retryAfterSeconds;

    public QueueFullException(int waiting, int retryAfterSeconds) {
        super(waiting + " requests are waiting; retry in " + retryAfterSeconds + " s");
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public int retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
