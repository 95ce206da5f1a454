package io.tensorlane.testkit;

import io.tensorlane.testkit.hub.HubCommand;
import io.tensorlane.testkit.sim.SimulatorCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code java -jar tensorlane-testkit-*-cli.jar up|down|status|sim|hub} — what hack/local-cluster.sh and hack/demo.sh run. */
@Command(
        name = "tensorlane-testkit",
        mixinStandardHelpOptions = true,
        subcommands = {
            Cli.Up.class,
            Cli.Down.class,
            Cli.Status.class,
            SimulatorCommand.class,
            SimulatorBenchCommand.class,
            HubCommand.class
        },
        description = "Local Kubernetes 1.20 control plane and GPU node simulator for Tensorlane's tests and demo.")
public final class Cli implements Runnable {
    /** Default state directory of a detached control plane. */
    public static Path defaultStateDir() {
        String env = System.getenv("TENSORLANE_STATE_DIR");
        return env != null && !env.isBlank()
                ? Path.of(env)
                : Path.of(
                        System.getProperty("java.io.tmpdir"),
                        "tensorlane-local-cluster-" + System.getProperty("user.name"));
    }

    public static void main(String[] args) {
        System.exit(new CommandLine(new Cli()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    @Command(name = "up", description = "Start a detached control plane; prints the kubeconfig path on the last line.")
    static final class Up implements Callable<Integer> {
        @Option(
                names = "--state-dir",
                description = "State directory (default: $TENSORLANE_STATE_DIR or /tmp/tensorlane-local-cluster-$USER)")
        Path stateDir = defaultStateDir();

        @Override
        public Integer call() throws Exception {
            ClusterState existing = ClusterState.read(stateDir);
            if (existing != null && existing.allAlive()) {
                System.err.println("[local-cluster] already running: " + existing.masterUrl());
                System.out.println(existing.kubeconfig());
                return 0;
            }
            if (existing != null) {
                System.err.println("[local-cluster] cleaning up a partly dead control plane in " + stateDir);
                ClusterState.stop(stateDir);
            }
            Files.createDirectories(stateDir);
            LocalControlPlane plane = LocalControlPlane.start(stateDir, true);
            System.err.printf(
                    "[local-cluster] up in %.1f s: %s (logs in %s)%n",
                    plane.startupTime().toMillis() / 1000.0, plane.cluster().masterUrl(), stateDir.resolve("logs"));
            System.out.println(plane.cluster().kubeconfig());
            return 0;
        }
    }

    @Command(name = "down", description = "Stop the control plane recorded in the state directory, by PID.")
    static final class Down implements Callable<Integer> {
        @Option(names = "--state-dir")
        Path stateDir = defaultStateDir();

        @Override
        public Integer call() {
            boolean stopped = ClusterState.stop(stateDir);
            System.err.println(stopped ? "[local-cluster] stopped" : "[local-cluster] nothing recorded in " + stateDir);
            return 0;
        }
    }

    @Command(name = "status", description = "Exit 0 when the recorded control plane runs and answers /readyz.")
    static final class Status implements Callable<Integer> {
        @Option(names = "--state-dir")
        Path stateDir = defaultStateDir();

        @Override
        public Integer call() {
            ClusterState s = ClusterState.read(stateDir);
            if (s == null) {
                System.err.println("[local-cluster] not running (no " + stateDir.resolve(ClusterState.FILE) + ")");
                return 1;
            }
            boolean ok = s.allAlive() && Readiness.httpOk(s.masterUrl() + "/readyz");
            System.err.println(
                    "[local-cluster] " + (ok ? "running: " : "NOT healthy: ") + s.masterUrl() + " pids " + s.pids());
            return ok ? 0 : 1;
        }
    }
}
