package io.tensorlane.runtime.engine;

import io.tensorlane.contract.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * The last allreduce launches one rank enqueued (kernel, type, count, input slot, grid) and CUDA-graph captures and
 * replays, oldest first, for the watchdog's message: ranks whose call sequences differ (another kernel, count or grid at
 * the same call) wait for each other at different barriers, and the two journals side by side show where they parted.
 * A replay's allreduces are not listed one by one. Each entry carries its time on the JVM's monotonic clock (ms since
 * this class was loaded), the same base on every rank, so the journals also show a rank whose launch came late (a
 * driver call that held it up). Entries are kept as fields and formatted only when read, so a launch costs a few array
 * stores and a clock read. Used from the rank's worker thread only.
 */
final class LaunchJournal {
    private static final long BASE = System.nanoTime();
    private final LongSupplier clock;
    private final String[] kinds;
    private final DType[] dtypes;
    private final long[] counts;
    private final int[] slots;
    private final int[] blocks;
    private final long[] nanos;
    private long entries;

    LaunchJournal(int size) {
        this(size, () -> System.nanoTime() - BASE);
    }

    /** With {@code clock} giving each entry's time in nanoseconds (tests). */
    LaunchJournal(int size, LongSupplier clock) {
        this.clock = clock;
        nanos = new long[size];
        kinds = new String[size];
        dtypes = new DType[size];
        counts = new long[size];
        slots = new int[size];
        blocks = new int[size];
    }

    /** A kernel launch; {@code slot} -1 where the kernel takes no input pointer table. */
    void launch(String kind, DType dtype, long count, int slot, int grid) {
        int i = (int) (entries++ % kinds.length);
        kinds[i] = kind;
        dtypes[i] = dtype;
        counts[i] = count;
        slots[i] = slot;
        blocks[i] = grid;
        nanos[i] = clock.getAsLong();
    }

    /** A CUDA graph's capture or replay ({@code kind}, a constant) of the decode-step bucket {@code bucket}. */
    void graph(String kind, int bucket) {
        launch(kind, null, bucket, -1, 0);
    }

    /** "#n ..." for the kept entries, oldest first (n counts every entry since the rank started, from 1). */
    List<String> lines() {
        List<String> out = new ArrayList<>();
        for (long n = Math.max(0, entries - kinds.length); n < entries; n++) {
            out.add(line(n));
        }
        return out;
    }

    /** The latest entry, as {@link #lines} writes it. */
    String last() {
        return entries == 0 ? "(none)" : line(entries - 1);
    }

    private String line(long n) {
        int i = (int) (n % kinds.length);
        String at = String.format(java.util.Locale.ROOT, "#%d @%.3f ms ", n + 1, nanos[i] / 1e6);
        if (dtypes[i] == null) {
            return at + kinds[i] + " " + counts[i];
        }
        return at + kinds[i] + " " + dtypes[i] + " count " + counts[i] + (slots[i] >= 0 ? " slot " + slots[i] : "")
                + ", " + blocks[i] + " blocks";
    }
}
