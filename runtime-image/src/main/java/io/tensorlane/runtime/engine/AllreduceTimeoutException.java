package io.tensorlane.runtime.engine;

/** The kernel watchdog fired: a peer did not arrive in time. The communicator is unusable afterwards. */
public class AllreduceTimeoutException extends RuntimeException {
    private final WatchdogRecord record;

    public AllreduceTimeoutException(WatchdogRecord record) {
        super(record.message());
        this.record = record;
    }

    public WatchdogRecord record() {
        return record;
    }
}
