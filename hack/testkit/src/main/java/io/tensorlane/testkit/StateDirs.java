package io.tensorlane.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Where the processes this kit starts ({@link LocalControlPlane}, {@link CurrentCrdServer}) keep their state, and how
 * that state is removed:
 *
 * <ul>
 *   <li>an attached plane's state is a temporary directory named {@value #TEMP_PREFIX}… that holds the owning JVM's
 *       PID in {@value #OWNER_FILE} ({@link #createOwned});
 *   <li>etcd's data goes to {@code /dev/shm} when it is a writable directory (no disk syncs), named after the state
 *       directory and the JVM's PID, else under the state directory ({@link #etcdData});
 *   <li>a JVM killed with SIGKILL takes its processes with it (parent-death signal) but cannot delete its state: the
 *       next start removes the state, and the {@code /dev/shm} etcd data, of every owner that is gone ({@link
 *       #sweepStale}).
 * </ul>
 */
final class StateDirs {
    static final String TEMP_PREFIX = "tensorlane-cp-";
    static final String OWNER_FILE = "owner.pid";
    private static final String ETCD_PREFIX = "tensorlane-etcd-";
    private static final Path SHM = Path.of("/dev/shm");

    private StateDirs() {}

    /** A fresh temporary directory {@value #TEMP_PREFIX}{@code kind}… owned by this JVM (its PID in the owner file). */
    static Path createOwned(String kind) throws IOException {
        Path dir = Files.createTempDirectory(TEMP_PREFIX + kind);
        Files.writeString(
                dir.resolve(OWNER_FILE), Long.toString(ProcessHandle.current().pid()));
        return dir;
    }

    /** Where etcd keeps the data of the plane whose state is {@code stateDir} (not created here). */
    static Path etcdData(Path stateDir) {
        return Files.isDirectory(SHM) && Files.isWritable(SHM)
                ? SHM.resolve(ETCD_PREFIX + stateDir.getFileName() + "-"
                        + ProcessHandle.current().pid())
                : stateDir.resolve("etcd");
    }

    /** {@link #sweepStale(Path, Path)} of the JVM's temporary directory and {@code /dev/shm}. */
    static void sweepStale() {
        sweepStale(Path.of(System.getProperty("java.io.tmpdir")), SHM);
    }

    /**
     * Removes every {@value #TEMP_PREFIX}… directory under {@code tmp} whose owner process is gone, and its etcd data
     * under {@code shm}. A directory without a readable owner file is left alone (being created, or an older layout).
     */
    static void sweepStale(Path tmp, Path shm) {
        try (Stream<Path> dirs = Files.list(tmp)) {
            for (Path dir : dirs.filter(d -> d.getFileName().toString().startsWith(TEMP_PREFIX))
                    .toList()) {
                long pid;
                try {
                    pid = Long.parseLong(
                            Files.readString(dir.resolve(OWNER_FILE)).trim());
                } catch (IOException | NumberFormatException e) {
                    continue; // not ours to judge (being created, or an older layout)
                }
                if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                    continue;
                }
                try (Stream<Path> data = Files.list(shm)) {
                    data.filter(p -> p.getFileName().toString().startsWith(ETCD_PREFIX + dir.getFileName() + "-"))
                            .forEach(StateDirs::deleteTree);
                } catch (IOException ignored) {
                    // no /dev/shm
                }
                deleteTree(dir);
            }
        } catch (IOException e) {
            System.err.println("[tensorlane] cannot sweep " + tmp + ": " + e.getMessage());
        }
    }

    /** Deletes {@code dir} and everything under it; a failure is logged, not thrown. */
    static void deleteTree(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            System.err.println("[tensorlane] cannot delete " + dir + ": " + e.getMessage());
        }
    }
}
