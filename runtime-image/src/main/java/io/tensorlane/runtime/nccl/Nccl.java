package io.tensorlane.runtime.nccl;

import com.sun.jna.Native;
import com.sun.jna.ptr.IntByReference;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Loads NCCL. The library is found, in this order: the explicit path (CLI option {@code --nccl-lib}), the
 * environment variable {@value #ENV}, then {@code libnccl.so.2} through the normal library search
 * ({@code LD_LIBRARY_PATH}, {@code jna.library.path}). On machines where NCCL ships inside PyTorch, point
 * {@value #ENV} at {@code <site-packages>/nvidia/nccl/lib/libnccl.so.2}.
 */
public final class Nccl {
    public static final String ENV = "TENSORLANE_NCCL_LIB";
    public static final String DEFAULT_NAME = "libnccl.so.2";

    private final NcclLibrary lib;
    private final String source;

    private Nccl(NcclLibrary lib, String source) {
        this.lib = lib;
        this.source = source;
    }

    /** Candidates in search order (pure, for tests and messages). */
    public static List<String> candidates(String explicitPath, String envValue) {
        List<String> out = new ArrayList<>();
        if (explicitPath != null && !explicitPath.isBlank()) {
            out.add(explicitPath);
        }
        if (envValue != null && !envValue.isBlank()) {
            out.add(envValue);
        }
        out.add(DEFAULT_NAME);
        return out;
    }

    /** Loads NCCL or throws with every place that was tried. */
    public static Nccl load(String explicitPath) {
        List<String> tried = new ArrayList<>();
        for (String c : candidates(explicitPath, System.getenv(ENV))) {
            if (c.contains("/") && !Files.exists(Path.of(c))) {
                tried.add(c + " (no such file)");
                continue;
            }
            try {
                return new Nccl(Native.load(c, NcclLibrary.class), c);
            } catch (UnsatisfiedLinkError e) {
                tried.add(c + " (" + e.getMessage().lines().findFirst().orElse("") + ")");
            }
        }
        throw new IllegalStateException(
                "NCCL not found; tried " + String.join(", ", tried) + ". Set --nccl-lib or " + ENV);
    }

    public NcclLibrary lib() {
        return lib;
    }

    public String source() {
        return source;
    }

    /** "2.28.9" from ncclGetVersion's code (major*10000 + minor*100 + patch for NCCL >= 2.9). */
    public String version() {
        IntByReference v = new IntByReference();
        check(lib.ncclGetVersion(v), "ncclGetVersion");
        return versionString(v.getValue());
    }

    public static String versionString(int code) {
        if (code >= 10000) {
            return (code / 10000) + "." + (code / 100 % 100) + "." + (code % 100);
        }
        return (code / 1000) + "." + (code / 100 % 10) + "." + (code % 100);
    }

    void check(int rc, String what) {
        if (rc != NcclLibrary.ncclSuccess) {
            throw new IllegalStateException(what + " failed: " + lib.ncclGetErrorString(rc) + " (" + rc + ")");
        }
    }
}
