package io.tensorlane.testkit;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * One control-plane process, its PID and its log file. Started attached (it dies with this JVM, even on SIGKILL,
 * through {@code setpriv --pdeathsig KILL}) or detached (its own session through {@code setsid}, for
 * {@code local-cluster.sh up}). Stopped by PID: SIGTERM, then SIGKILL after a grace period.
 */
public final class ManagedProcess {
    /**
     * Linux delivers the parent-death signal when the thread that forked the child exits, so attached children are
     * forked from one daemon thread that lives as long as the JVM.
     */
    private static final ExecutorService LAUNCHER = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "tensorlane-process-launcher");
        t.setDaemon(true);
        return t;
    });

    private static final boolean HAS_SETPRIV = Files.isExecutable(Path.of("/usr/bin/setpriv"));
    private static final boolean HAS_SETSID = Files.isExecutable(Path.of("/usr/bin/setsid"));

    private final String name;
    private final long pid;
    private final Path log;
    private final Process process; // null when re-attached by PID from a state file

    private ManagedProcess(String name, long pid, Path log, Process process) {
        this.name = name;
        this.pid = pid;
        this.log = log;
        this.process = process;
    }

    /** Starts {@code command} with stdout and stderr appended to {@code log}. */
    public static ManagedProcess start(String name, List<String> command, Path log, boolean detached)
            throws IOException {
        List<String> cmd = new ArrayList<>();
        if (detached && HAS_SETSID) {
            cmd.add("/usr/bin/setsid"); // a fresh session: Ctrl-C in the shell that ran `up` does not reach it
        } else if (!detached && HAS_SETPRIV) {
            cmd.addAll(List.of("/usr/bin/setpriv", "--pdeathsig", "KILL", "--")); // exec's the binary: same PID
        }
        cmd.addAll(command);
        Files.createDirectories(log.getParent());
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        try {
            Process p = detached ? pb.start() : LAUNCHER.submit(pb::start).get();
            return new ManagedProcess(name, p.pid(), log, p);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof IOException io ? io : new IOException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while starting " + name, e);
        }
    }

    /** A process known only by PID (from a state file). */
    public static ManagedProcess ofPid(String name, long pid, Path log) {
        return new ManagedProcess(name, pid, log, null);
    }

    public String name() {
        return name;
    }

    public long pid() {
        return pid;
    }

    public Path log() {
        return log;
    }

    public boolean isAlive() {
        return handle().map(ProcessHandle::isAlive).orElse(false);
    }

    /** Exit code, when it was started by this JVM and has exited. */
    public Optional<Integer> exitCode() {
        return process != null && !process.isAlive() ? Optional.of(process.exitValue()) : Optional.empty();
    }

    /**
     * The live process with this PID, if it still runs the expected binary (a PID from an old state file may have been
     * reused by an unrelated process, which must not be signalled).
     */
    private Optional<ProcessHandle> handle() {
        if (process != null) {
            return Optional.of(process.toHandle());
        }
        return ProcessHandle.of(pid)
                .filter(h -> h.info().command().map(c -> c.endsWith("/" + name)).orElse(false));
    }

    /** Sends SIGTERM. */
    public void terminate() {
        handle().ifPresent(ProcessHandle::destroy);
    }

    /** SIGKILL, no grace (a crash, an OOM kill, a node lost); returns when the process is gone. */
    public void kill() {
        handle().ifPresent(h -> {
            h.destroyForcibly();
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new IllegalStateException(name + " (pid " + pid + ") still alive 10 s after SIGKILL", e);
            }
        });
        if (process != null) {
            try {
                process.waitFor(); // reap
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits up to {@code graceMillis} for exit after {@link #terminate()}, then SIGKILLs; true when gone. */
    public boolean awaitOrKill(long graceMillis) {
        Optional<ProcessHandle> h = handle();
        if (h.isEmpty()) {
            return true;
        }
        try {
            h.get().onExit().get(graceMillis, TimeUnit.MILLISECONDS);
        } catch (Exception timeoutOrInterrupt) {
            h.get().destroyForcibly();
            try {
                h.get().onExit().get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                return !h.get().isAlive();
            }
        }
        if (process != null) {
            try {
                // reap; bounded: the handle's onExit can complete before Process has recorded the exit, and
                // exitValue() then threw "process hasn't exited" (seen once in the lifecycle test, 2026-12-01)
                process.waitFor(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return !h.get().isAlive();
    }

    /** The last lines of the log, for error messages. */
    public String logTail(int lines) {
        return KubeBinaries.tail(log, lines);
    }

    @Override
    public String toString() {
        return name + "(pid " + pid + ", log " + log + ")";
    }
}
