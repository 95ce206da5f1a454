package io.tensorlane.runtime.text;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Process-wide settings DJL reads on its first use (its native-library loader runs in a static initializer). Each is
 * set as a system property only when neither the environment variable nor the system property of that name is set.
 *
 * <ul>
 *   <li>{@code DJL_CACHE_DIR}: DJL extracts {@code libtokenizers.so} from its jar into this folder; the default is
 *       under the home directory, which a container may have read-only. We use {@code java.io.tmpdir}/tensorlane-djl-USER.
 *   <li>{@code RUST_FLAVOR=cpu}: on a machine with a GPU DJL otherwise asks for the CUDA build of the tokenizer library
 *       ({@code cu122}, not in the jar) and tries to download it from publish.djl.ai, which fails offline. The tokenizer
 *       does not use the GPU; the jar's cpu build is the one we want everywhere.
 *   <li>{@code OPT_OUT_TRACKING=true}: DJL's telemetry otherwise queries the EC2 metadata endpoint once a day.
 * </ul>
 */
final class DjlSetup {
    static final String CACHE_DIR = "DJL_CACHE_DIR";

    private static boolean done;

    private DjlSetup() {}

    static synchronized void ensure() {
        if (done) {
            return;
        }
        if (unset(CACHE_DIR)) {
            Path dir = Path.of(
                    System.getProperty("java.io.tmpdir"), "tensorlane-djl-" + System.getProperty("user.name", "user"));
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                // DJL reports the failure to extract with the path in its message
            }
            System.setProperty(CACHE_DIR, dir.toString());
        }
        if (unset("RUST_FLAVOR")) {
            System.setProperty("RUST_FLAVOR", "cpu");
        }
        if (unset("OPT_OUT_TRACKING")) {
            System.setProperty("OPT_OUT_TRACKING", "true");
        }
        done = true;
    }

    private static boolean unset(String name) {
        String env = System.getenv(name);
        String prop = System.getProperty(name);
        return (env == null || env.isEmpty()) && (prop == null || prop.isEmpty());
    }
}
