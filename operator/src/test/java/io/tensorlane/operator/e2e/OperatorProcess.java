package io.tensorlane.operator.e2e;

import static io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE;
import static io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration.RENEW_DEADLINE_DEFAULT_VALUE;
import static io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.ManagedProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.jboss.logmanager.formatters.PatternFormatter;
import org.jboss.logmanager.handlers.ConsoleHandler;

/**
 * The operator as a separate JVM, so that a test can SIGKILL it like a crashed pod and start it again. It runs the
 * reconcilers {@link OperatorHarness} registers, with its test settings, from this test JVM's classpath: the packaged
 * Quarkus application exists only after {@code package}, which Maven runs after these tests. With an identity it runs
 * JOSDK leader election on the production lease name ({@link TensorlaneConfig.Producer#LEASE_NAME}) and the production
 * durations (JOSDK's defaults: lease 15 s, renew deadline 10 s, retry 2 s) in the test namespace.
 *
 * <p>Started through the testkit's {@link ManagedProcess}: it dies with the test JVM (parent-death signal) and is
 * killed by PID. Every start appends to one log file.
 */
public final class OperatorProcess implements AutoCloseable {
    static final String STARTED = "tensorlane-operator-process started";
    static final Duration START_TIMEOUT = Duration.ofSeconds(90);

    private final LocalCluster cluster;
    private final String namespace;
    private final String identity;
    private final Path log;
    private final Path argFile;
    private ManagedProcess process;
    private int starts;

    private OperatorProcess(LocalCluster cluster, String namespace, String identity, Path dir) {
        this.cluster = cluster;
        this.namespace = namespace;
        this.identity = identity;
        try {
            Files.createDirectories(dir);
            String name = "operator-" + namespace + (identity == null ? "" : "-" + identity);
            this.log = dir.resolve(name + ".log");
            this.argFile = dir.resolve(name + ".args");
            String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            Files.writeString(argFile, "-cp \"" + classpath.replace("\\", "\\\\") + "\"\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts the operator process watching {@code namespace}; {@code identity} non-null: with leader election. */
    public static OperatorProcess start(LocalCluster cluster, String namespace, String identity) {
        OperatorProcess p = new OperatorProcess(cluster, namespace, identity, Path.of("target", "operator-processes"));
        p.launch();
        return p;
    }

    private void launch() {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-Djava.util.logging.manager=org.jboss.logmanager.LogManager",
                "-Dkubeconfig=" + cluster.kubeconfig(),
                "-D" + OperatorHarness.HUB_PROPERTY + "=" + OperatorHarness.sampleHubEndpoint(),
                "@" + argFile.toAbsolutePath(),
                OperatorProcess.class.getName(),
                namespace));
        if (identity != null) {
            cmd.add(identity);
        }
        try {
            process = ManagedProcess.start("java", cmd, log, false);
            starts++;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start the operator process", e);
        }
    }

    /** Waits until the current process has started its controllers (informers synced); returns how long that took. */
    public Duration awaitStarted() {
        long t0 = System.nanoTime();
        String line = STARTED + " pid=" + process.pid();
        while (true) {
            try {
                if (Files.exists(log) && Files.readString(log).contains(line)) {
                    return Duration.ofNanos(System.nanoTime() - t0);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            if (!process.isAlive()) {
                throw new IllegalStateException(
                        "the operator process exited before it started; log " + log + ":\n" + process.logTail(40));
            }
            if (System.nanoTime() - t0 > START_TIMEOUT.toNanos()) {
                throw new IllegalStateException("the operator process did not start in " + START_TIMEOUT + "; log "
                        + log + ":\n" + process.logTail(40));
            }
            sleep(100);
        }
    }

    /** SIGKILL: no shutdown hook, no pending write finished. */
    public void kill() {
        process.kill();
    }

    /** Starts it again (after {@link #kill}). */
    public void restart() {
        if (process.isAlive()) {
            throw new IllegalStateException("still running: " + process);
        }
        launch();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    public String identity() {
        return identity;
    }

    /** How many times a process was started. */
    public int starts() {
        return starts;
    }

    public Path log() {
        return log;
    }

    public String logTail(int lines) {
        return process.logTail(lines);
    }

    @Override
    public void close() {
        if (process != null) {
            process.terminate();
            process.awaitOrKill(5_000);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * INFO and above to stdout (the log file): every event the operator records, every warning; and at DEBUG, JOSDK's
     * cache of the operator's own status writes (which write it holds, which it dropped). Quarkus's bootstrap
     * configurator, on this classpath, holds all records for a runtime configuration that never comes outside a Quarkus
     * application, so without this handler the process logs nothing and a failing fault test's "operator log" is empty.
     */
    static void logToStdout() {
        java.util.logging.Logger root = java.util.logging.Logger.getLogger("");
        root.setLevel(java.util.logging.Level.INFO);
        root.addHandler(new ConsoleHandler(
                ConsoleHandler.Target.SYSTEM_OUT, new PatternFormatter("%d{HH:mm:ss,SSS} %-5p [%c{1}] (%t) %s%e%n")));
        java.util.logging.Logger.getLogger(
                        "io.javaoperatorsdk.operator.processing.event.source.informer.TemporaryResourceCache")
                .setLevel(java.util.logging.Level.FINE);
    }

    /** The process: {@code <namespace> [<leader-election identity>]}; runs until killed. */
    public static void main(String[] args) throws InterruptedException {
        String namespace = args[0];
        LeaderElectionConfiguration leaderElection = args.length < 2
                ? null
                : new LeaderElectionConfiguration(
                        TensorlaneConfig.Producer.LEASE_NAME,
                        namespace,
                        LEASE_DURATION_DEFAULT_VALUE,
                        RENEW_DEADLINE_DEFAULT_VALUE,
                        RETRY_PERIOD_DEFAULT_VALUE,
                        args[1],
                        null,
                        true);
        logToStdout();
        KubernetesClient client = new KubernetesClientBuilder().build();
        OperatorHarness.start(client, namespace, OperatorHarness.testSettings(), leaderElection);
        System.out.println(STARTED + " pid=" + ProcessHandle.current().pid());
        System.out.flush();
        new CountDownLatch(1).await();
    }
}
