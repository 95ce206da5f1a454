package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sweep removes the state of owners that are gone, and only theirs (no control plane is started). */
class StateDirsTest {
    @TempDir
    Path tmp;

    @TempDir
    Path shm;

    private Path state(String name, String owner) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name).resolve("logs")).getParent();
        Files.writeString(dir.resolve("logs/etcd.log"), "x");
        if (owner != null) {
            Files.writeString(dir.resolve(StateDirs.OWNER_FILE), owner);
        }
        return dir;
    }

    private Path etcd(Path state, long pid) throws IOException {
        Path d = Files.createDirectories(shm.resolve("tensorlane-etcd-" + state.getFileName() + "-" + pid));
        Files.writeString(d.resolve("member"), "x");
        return d;
    }

    /** The PID of a process that has exited. */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        p.waitFor();
        return p.pid();
    }

    @Test
    void theStateOfAGoneOwnerIsRemovedWithItsEtcdDataAndNothingElse() throws Exception {
        long dead = deadPid();
        long alive = ProcessHandle.current().pid();
        Path gone = state(StateDirs.TEMP_PREFIX + "gone", Long.toString(dead));
        Path goneEtcd = etcd(gone, dead);
        Path goneCrd = state(StateDirs.TEMP_PREFIX + "crd-gone", Long.toString(dead) + "\n");
        Path live = state(StateDirs.TEMP_PREFIX + "live", Long.toString(alive));
        Path liveEtcd = etcd(live, alive);
        Path noOwner = state(StateDirs.TEMP_PREFIX + "creating", null);
        Path badOwner = state(StateDirs.TEMP_PREFIX + "old", "not a pid");
        Path other = state("someone-else", Long.toString(dead));
        Path otherEtcd = etcd(other, dead);

        StateDirs.sweepStale(tmp, shm);

        assertThat(gone).doesNotExist();
        assertThat(goneEtcd).doesNotExist();
        assertThat(goneCrd).doesNotExist();
        assertThat(live).isDirectory();
        assertThat(live.resolve("logs/etcd.log")).exists();
        assertThat(liveEtcd).isDirectory();
        assertThat(noOwner).isDirectory();
        assertThat(badOwner).isDirectory();
        assertThat(other).isDirectory();
        assertThat(otherEtcd).isDirectory();
    }

    @Test
    void anOwnedDirectoryNamesThisJvmAndEtcdDataIsNamedAfterIt() throws IOException {
        Path dir = StateDirs.createOwned("unit-");
        try {
            assertThat(dir.getFileName().toString()).startsWith(StateDirs.TEMP_PREFIX + "unit-");
            assertThat(Files.readString(dir.resolve(StateDirs.OWNER_FILE)))
                    .isEqualTo(Long.toString(ProcessHandle.current().pid()));
            Path data = StateDirs.etcdData(dir);
            assertThat(data.getFileName().toString())
                    .isIn(
                            "tensorlane-etcd-" + dir.getFileName() + "-"
                                    + ProcessHandle.current().pid(),
                            "etcd");
        } finally {
            StateDirs.deleteTree(dir);
        }
        assertThat(dir).doesNotExist();
    }
}
