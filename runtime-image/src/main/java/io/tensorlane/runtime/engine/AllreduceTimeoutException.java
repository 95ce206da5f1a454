package io.tensorlane.runtime.engine;

/** The kernel watchdog fired: a peer did not arrive in time. The communicator is unusable afterwards. */
public class AllreduceTimeoutException extends RuntimeException {
    private final WatchdogRecord record;
    private final java.util.List<String> recentLaunches;

    public AllreduceTimeoutException(WatchdogRecord record) {
        this(record, java.util.List.of());
    }

    public AllreduceTimeoutException(WatchdogRecord record, java.util.List<String> recentLaunches) {
        super(record.message());
        this.record = record;
        this.recentLaunches = java.util.List.copyOf(recentLaunches);
    }

    public WatchdogRecord record() {
        return record;
    }

    /** The failing rank's last allreduce launches, oldest first ({@code LaunchJournal}); empty where not known. */
    public java.util.List<String> recentLaunches() {
        return recentLaunches;
    }
}
