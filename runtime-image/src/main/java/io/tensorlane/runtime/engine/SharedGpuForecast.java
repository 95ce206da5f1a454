package io.tensorlane.runtime.engine;

import java.util.HashSet;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Whether a command's ranks will share a GPU, decided before the CUDA driver starts: the virtual-rank driver settings
 * ({@link SharedContextEnv}) count only before then, and a command that places ranks by the GPU count (selftest, bench)
 * would otherwise have to start the driver to learn it. The caller counts the GPUs without the driver (NVML,
 * {@code probe.Nvml#gpuCount}); {@link #visibleGpus} narrows that by {@code CUDA_VISIBLE_DEVICES}. Where either cannot be
 * read the forecast is "shared" (the settings are harmless on real ranks, their absence is a deadlock on virtual ones).
 * Pure functions.
 */
public final class SharedGpuForecast {
    private SharedGpuForecast() {}

    /**
     * True when some world size in {@code worldSizes} puts two ranks on one GPU: with {@code explicit} devices of that
     * size, when the list repeats a device; otherwise (rank r on GPU r mod count, {@code cli.Args#devices}) when the
     * world size exceeds the visible GPUs, or when their number is unknown.
     */
    public static boolean ranksShareAGpu(List<Integer> worldSizes, List<Integer> explicit, OptionalInt visibleGpus) {
        for (int w : worldSizes) {
            if (explicit != null && explicit.size() == w) {
                if (CommunicatorConfig.sharesAGpu(explicit)) {
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
}
