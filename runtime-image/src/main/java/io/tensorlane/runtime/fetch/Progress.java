package io.tensorlane.runtime.fetch;

import io.tensorlane.contract.FetchProgress;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * Download progress for a pod log: per file and overall bytes and the rate, at most once per interval, plus one line per
 * finished file. Each time it also prints the contract's machine-readable {@link FetchProgress} line (at the plan, with
 * each progress line, after each file and at the end), which the operator reads from the init container's log.
 * Thread-safe (the stall watchdog reads {@link #idleNanos}).
 */
final class Progress {
    private final PrintWriter out;
    private final long intervalNanos;
    private final LongSupplier clock;
    private final long startNanos;
    private long total;
    private long done;
    private String model;
    private int files;
    private int filesDone;
    private String file;
    private long fileDone;
    private long fileSize;
    private long fileStartNanos;
    private long fileStartBytes;
    private long lastPrintNanos;
    private long lastPrintDone;
    private volatile long lastByteNanos;

    Progress(PrintWriter out, long intervalNanos, LongSupplier clock) {
        this.out = out;
        this.intervalNanos = intervalNanos;
        this.clock = clock;
        this.startNanos = clock.getAsLong();
        this.lastPrintNanos = startNanos;
        this.lastByteNanos = startNanos;
    }

    /**
     * Total bytes of the files to fetch and the bytes already on disk (complete files and partial downloads).
     *
     * @param model     {@code org/name@commit}, for the machine-readable line
     * @param fileCount files selected
     * @param complete  files already complete on disk
     */
    synchronized void plan(long totalBytes, long alreadyDone, String model, int fileCount, int complete) {
        total = totalBytes;
        done = alreadyDone;
        lastPrintDone = alreadyDone;
        this.model = model;
        files = fileCount;
        filesDone = complete;
        machine(FetchProgress.RUNNING);
    }

    /** Every file is on disk and verified. */
    synchronized void complete() {
        filesDone = files;
        machine(FetchProgress.COMPLETE);
    }

    /** An earlier run left the model complete: the whole line at once. */
    synchronized void alreadyComplete(String model, long bytes, int fileCount) {
        this.model = model;
        total = bytes;
        done = bytes;
        files = fileCount;
        complete();
    }

    private void machine(String state) {
        if (model == null) {
            return;
        }
        out.println(new FetchProgress(model, state, done, total, Math.min(filesDone, files), files).toLine());
        out.flush();
    }

    /** A file starts (or resumes at {@code have} bytes). */
    synchronized void start(String name, long size, long have) {
        file = name;
        fileSize = size;
        fileDone = have;
        fileStartNanos = clock.getAsLong();
        fileStartBytes = have;
        lastByteNanos = fileStartNanos;
    }

    /** The server sent the file from byte 0 again (it ignored the Range), so {@code dropped} bytes count again. */
    synchronized void restart(long dropped) {
        done -= dropped;
        fileDone -= dropped;
        fileStartBytes = 0;
    }

    synchronized void add(long n) {
        done += n;
        fileDone += n;
        long now = clock.getAsLong();
        lastByteNanos = now;
        if (now - lastPrintNanos >= intervalNanos) {
            double secs = Math.max(1e-9, (now - lastPrintNanos) / 1e9);
            out.printf(
                    Locale.ROOT,
                    "fetch-model: %s %s/%s | total %s/%s (%d%%) | %.1f MB/s%n",
                    file,
                    human(fileDone),
                    fileSize > 0 ? human(fileSize) : "?",
                    human(done),
                    human(total),
                    total > 0 ? done * 100 / total : 0,
                    (done - lastPrintDone) / 1e6 / secs);
            machine(FetchProgress.RUNNING);
            lastPrintNanos = now;
            lastPrintDone = done;
        }
    }

    synchronized void finish(long size) {
        double secs = Math.max(1e-9, (clock.getAsLong() - fileStartNanos) / 1e9);
        out.printf(
                Locale.ROOT,
                "fetch-model: done %s (%s%s in %.1f s, %.1f MB/s)%n",
                file,
                human(size),
                fileStartBytes > 0 ? ", resumed at " + human(fileStartBytes) : "",
                secs,
                (size - fileStartBytes) / 1e6 / secs);
        filesDone++;
        machine(FetchProgress.RUNNING);
    }

    /** A transfer starts: the stall timeout counts from now. */
    void touch() {
        lastByteNanos = clock.getAsLong();
    }

    /** How long since the last byte arrived (or the transfer started). */
    long idleNanos() {
        return clock.getAsLong() - lastByteNanos;
    }

    synchronized String summary() {
        double secs = Math.max(1e-9, (clock.getAsLong() - startNanos) / 1e9);
        return String.format(Locale.ROOT, "%s in %.1f s", human(done), secs);
    }

    static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.2f %s", v, units[u]);
    }
}
