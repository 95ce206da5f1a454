package io.tensorlane.runtime.engine;

import com.sun.jna.ptr.IntByReference;
import io.tensorlane.runtime.probe.Nvml;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import java.util.logging.Logger;

/**
 * Whether a command's ranks will share a GPU, decided before the CUDA driver starts: the virtual-rank driver settings
 * ({@link SharedContextEnv}) count only before then, and a command that places ranks by the GPU count (selftest, bench)
 * would otherwise have to start the driver to learn it. The GPUs are counted through NVML, which does not start the
 * CUDA driver, narrowed by {@code CUDA_VISIBLE_DEVICES}; where either cannot be read the forecast is "shared" (the
 * settings are harmless on real ranks, their absence is a deadlock on virtual ones).
 */
public final class SharedGpuForecast {
    private static final Logger LOG = Logger.getLogger(SharedGpuForecast.class.getName());

    private SharedGpuForecast() {}

    /**
     * True when some world size in {@code worldSizes} puts two ranks on one GPU: with {@code explicit} devices of that
     * size, when the list repeats a device; otherwise (rank r on GPU r mod count, {@code cli.Args#devices}) when the
     * world size exceeds the visible GPUs, or when their number is unknown.
     */
    public static boolean ranksShareAGpu(List<Integer> worldSizes, List<Integer> explicit, OptionalInt visibleGpus) {
        for (int w : worldSizes) {
            if (explicit != null && explicit.size() == w) {
                if (explicit.stream().distinct().count() < w) {
                    return true;
                }
            } else if (visibleGpus.isEmpty() || w > visibleGpus.getAsInt()) {
                return true;
            }
        }
        return false;
    }

    /**
     * The GPUs CUDA will enumerate, from the driver's count ({@code driverGpus}, NVML's, all GPUs) and
     * {@code CUDA_VISIBLE_DEVICES} ({@code visible}, null when unset): CUDA takes the listed indices in order up to the
     * first one that is invalid or repeated. Empty when either is unknown or the list names GPUs by UUID or MIG id.
     */
    public static OptionalInt visibleGpus(String visible, OptionalInt driverGpus) {
        if (driverGpus.isEmpty() || visible == null) {
            return driverGpus;
        }
        int all = driverGpus.getAsInt();
        Set<Integer> seen = new HashSet<>();
        for (String entry : visible.split(",", -1)) {
            String e = entry.trim();
            if (e.isEmpty()) {
                break;
            }
            int index;
            try {
                index = Integer.parseInt(e);
            } catch (NumberFormatException notAnIndex) {
                return OptionalInt.empty(); // GPU-<uuid>, MIG-<uuid>: not worth resolving here
            }
            if (index < 0 || index >= all || !seen.add(index)) {
                break;
            }
        }
        return OptionalInt.of(seen.size());
    }

    /** {@link #ranksShareAGpu} for this process: NVML's GPU count and the environment's CUDA_VISIBLE_DEVICES. */
    public static boolean ranksShareAGpu(List<Integer> worldSizes, List<Integer> explicit) {
        OptionalInt visible = visibleGpus(System.getenv("CUDA_VISIBLE_DEVICES"), nvmlGpuCount());
        boolean shared = ranksShareAGpu(worldSizes, explicit, visible);
        LOG.info(() -> "GPUs visible before the driver starts: "
                + (visible.isPresent() ? String.valueOf(visible.getAsInt()) : "unknown") + "; world sizes " + worldSizes
                + (shared ? " put ranks on a shared GPU: virtual-rank driver settings on" : ": one GPU per rank"));
        return shared;
    }

    /** The GPUs NVML counts (all of the machine's), or empty without NVML. */
    static OptionalInt nvmlGpuCount() {
        Nvml nvml;
        try {
            nvml = Nvml.load();
        } catch (UnsatisfiedLinkError e) {
            return OptionalInt.empty();
        }
        if (nvml.nvmlInit_v2() != Nvml.SUCCESS) {
            return OptionalInt.empty();
        }
        try {
            IntByReference count = new IntByReference();
            return nvml.nvmlDeviceGetCount_v2(count) == Nvml.SUCCESS
                    ? OptionalInt.of(count.getValue())
                    : OptionalInt.empty();
        } finally {
            nvml.nvmlShutdown();
        }
    }
}
