package io.tensorlane.runtime.engine;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.util.ArrayList;
import java.util.List;

/**
 * Driver settings for virtual ranks, which share one GPU and one context while their allreduce kernels spin waiting for
 * each other: anything that makes one rank's next kernel wait for another rank's spinning kernel is a deadlock.
 * <ul>
 *   <li>{@code CUDA_MODULE_LOADING=EAGER}: lazy loading (the default since CUDA 12) may synchronize the context when a
 *       kernel is first launched (a cuBLAS GEMM for a new shape, say); seen on the H200 as an allreduce watchdog timeout
 *       at 4 and 8 virtual ranks.</li>
 *   <li>{@code CUDA_DEVICE_MAX_CONNECTIONS=32}: the device has 8 hardware work queues by default and streams beyond that
 *       share one; a rank's GEMM queued behind another rank's spinning allreduce in the same queue never starts. With 8
 *       ranks (plus the driver's own streams) 8 queues are not enough; 32 is the maximum.</li>
 * </ul>
 * Both must be set before the driver initializes; a value the user set is kept. Ranks on separate GPUs have separate
 * contexts and keep the defaults.
 */
final class SharedContextEnv {
    static final String MODULE_LOADING = "CUDA_MODULE_LOADING";
    static final String MAX_CONNECTIONS = "CUDA_DEVICE_MAX_CONNECTIONS";

    interface LibC extends Library {
        int setenv(String name, String value, int overwrite);
    }

    private SharedContextEnv() {}

    /** Sets both variables unless the user set them; returns a warning per variable left at a value that may deadlock. */
    static List<String> apply() {
        List<String> warnings = new ArrayList<>();
        LibC libc = Native.load("c", LibC.class);
        String loading = System.getenv(MODULE_LOADING);
        if (loading != null && !loading.isBlank()) {
            if (!loading.equalsIgnoreCase("EAGER")) {
                warnings.add(MODULE_LOADING + "=" + loading
                        + " (not EAGER): virtual ranks may deadlock when a kernel is loaded lazily");
            }
        } else if (libc.setenv(MODULE_LOADING, "EAGER", 0) != 0) {
            warnings.add("could not set " + MODULE_LOADING + "=EAGER");
        }
        String conns = System.getenv(MAX_CONNECTIONS);
        if (conns != null && !conns.isBlank()) {
            if (connections(conns) < 32) {
                warnings.add(MAX_CONNECTIONS + "=" + conns
                        + " (under 32): virtual ranks may deadlock when two share a hardware queue");
            }
        } else if (libc.setenv(MAX_CONNECTIONS, "32", 0) != 0) {
            warnings.add("could not set " + MAX_CONNECTIONS + "=32");
        }
        return warnings;
    }

    static int connections(String value) {
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            return 8; // the driver's default for a value it cannot read
        }
    }
}
