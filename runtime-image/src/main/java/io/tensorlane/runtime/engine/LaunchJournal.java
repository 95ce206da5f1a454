package io.tensorlane.runtime.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * The last allreduce launches one rank enqueued (kernel, type, count, grid), oldest first, for the watchdog's message:
 * ranks whose call sequences differ (another kernel, count or grid at the same call) wait for each other at different
 * barriers, and the two journals side by side show where they parted. Launches inside a CUDA-graph capture are recorded
 * when captured; a replay records nothing. Used from the rank's worker thread only.
 */
final class LaunchJournal {
    private final String[] entries;
    private long launches;

    LaunchJournal(int size) {
        this.entries = new String[size];
    }

    void record(String what) {
        entries[(int) (launches % entries.length)] = what;
        launches++;
    }

    /** "#n what" for the kept launches, oldest first (n counts every launch since the rank started, from 1). */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        long first = Math.max(0, launches - entries.length);
        for (long n = first; n < launches; n++) {
            out.add("#" + (n + 1) + " " + entries[(int) (n % entries.length)]);
        }
        return out;
    }
}
