package io.tensorlane.runtime.engine;

import java.util.List;

/** The kernel watchdog fired: a peer did not arrive in time. The communicator is unusable afterwards. */
public class AllreduceTimeoutException extends RuntimeException {
    private final WatchdogRecord record;
    private final List<String> recentLaunches;

    public AllreduceTimeoutException(WatchdogRecord record) {
        this(record, List.of());
    }

    public AllreduceTimeoutException(WatchdogRecord record, List<String> recentLaunches) {
        super(record.message());
        this.record = record;
        this.recentLaunches = List.copyOf(recentLaunches);
    }

    public WatchdogRecord record() {
        return record;
    }

    /** The failing rank's last allreduce launches, oldest first ({@code LaunchJournal}); empty where not known. */
    public List<String> recentLaunches() {
        return recentLaunches;
    }
}
