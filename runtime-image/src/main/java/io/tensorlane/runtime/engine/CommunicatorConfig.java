package io.tensorlane.runtime.engine;

import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.BufferLayout;
import java.util.List;

/**
 * What a {@link Communicator} is built from.
 *
 * @param devices   CUDA device ordinal of each rank (index = rank). A device named several times hosts
 *                  "virtual ranks" (one stream each) — for tests on one GPU; their timings are not interconnect timings.
 * @param layout    buffer layout; its world size must equal {@code devices.size()}
 * @param table     size → algorithm; its world size must match and it must not reach beyond the layout's maximum
 * @param timeoutMillis watchdog: how long a rank waits for a peer before the kernel gives up (1..600000)
 */
public record CommunicatorConfig(List<Integer> devices, BufferLayout layout, AlgorithmTable table, long timeoutMillis) {
    public static final long DEFAULT_TIMEOUT_MILLIS = 2000;

    public CommunicatorConfig {
        if (devices == null || devices.isEmpty()) {
            throw new IllegalArgumentException("at least one device is required");
        }
        devices = List.copyOf(devices);
        for (int d : devices) {
            if (d < 0) {
                throw new IllegalArgumentException("device ordinals must be >= 0, got " + d);
            }
        }
        if (layout == null || table == null) {
            throw new IllegalArgumentException("layout and algorithm table are required");
        }
        if (layout.worldSize() != devices.size()) {
            throw new IllegalArgumentException(
                    "layout is for " + layout.worldSize() + " ranks but " + devices.size() + " devices were given");
        }
        if (table.worldSize() != devices.size()) {
            throw new IllegalArgumentException(
                    "algorithm table is for world size " + table.worldSize() + ", communicator has " + devices.size());
        }
        if (table.maxMessageBytes() > layout.maxMessageBytes()) {
            throw new IllegalArgumentException("algorithm table covers messages up to " + table.maxMessageBytes()
                    + " bytes but the buffers hold at most " + layout.maxMessageBytes());
        }
        if (timeoutMillis < 1 || timeoutMillis > 600_000) {
            throw new IllegalArgumentException("timeoutMillis must be 1..600000, got " + timeoutMillis);
        }
    }

    /** Defaults: the layout for {@code maxMessageBytes}, the default table, 2 s watchdog. */
    public static CommunicatorConfig of(List<Integer> devices, long maxMessageBytes) {
        BufferLayout layout = BufferLayout.of(devices.size(), maxMessageBytes);
        return new CommunicatorConfig(
                devices,
                layout,
                AlgorithmTable.defaults(devices.size(), layout.maxMessageBytes()),
                DEFAULT_TIMEOUT_MILLIS);
    }

    public CommunicatorConfig withTimeout(long millis) {
        return new CommunicatorConfig(devices, layout, table, millis);
    }

    public CommunicatorConfig withTable(AlgorithmTable t) {
        return new CommunicatorConfig(devices, layout, t, timeoutMillis);
    }

    /** How many ranks share {@code device}. */
    public int ranksOn(int device) {
        return (int) devices.stream().filter(d -> d == device).count();
    }

    /** Whether some GPU hosts several of the ranks (virtual ranks): {@link #sharesAGpu} of the devices. */
    public boolean virtual() {
        return sharesAGpu(devices);
    }

    /** Whether {@code devices} (the GPU of each rank) names a GPU more than once: ranks that share it are virtual. */
    public static boolean sharesAGpu(List<Integer> devices) {
        return devices.stream().distinct().count() < devices.size();
    }
}
