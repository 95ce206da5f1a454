package io.tensorlane.runtime.engine;

import io.tensorlane.contract.DType;
import java.util.ArrayList;
import java.util.List;

/**
 * The last allreduce launches one rank enqueued (kernel, type, count, input slot, grid) and CUDA-graph captures and
 * replays, oldest first, for the watchdog's message: ranks whose call sequences differ (another kernel, count or grid at
 * the same call) wait for each other at different barriers, and the two journals side by side show where they parted.
 * A replay's allreduces are not listed one by one. Entries are kept as fields and formatted only when read, so a launch
 * costs a few array stores. Used from the rank's worker thread only.
 */
final class LaunchJournal {
    private final String[] kinds;
    private final DType[] dtypes;
    private final long[] counts;
    private final int[] slots;
    private final int[] blocks;
    private long entries;

    LaunchJournal(int size) {
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
        if (dtypes[i] == null) {
            return "#" + (n + 1) + " " + kinds[i] + " " + counts[i];
        }
        return "#" + (n + 1) + " " + kinds[i] + " " + dtypes[i] + " count " + counts[i]
                + (slots[i] >= 0 ? " slot " + slots[i] : "") + ", " + blocks[i] + " blocks";
    }
}
