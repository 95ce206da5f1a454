package io.tensorlane.testkit;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The one control plane (and simulator) of a test JVM. Attaches to a running one when {@code TENSORLANE_KUBECONFIG}
 * names a kubeconfig (e.g. after {@code eval "$(hack/local-cluster.sh env)"}); otherwise starts its own, attached to
 * this JVM. Closing it stops what it started and checks that none of those processes is left.
 */
public final class SharedCluster implements AutoCloseable {
    private static SharedCluster instance;
    private static Throwable startFailure; // fail every later test class fast, with the first cause

    private final LocalControlPlane plane; // null when attached to an existing cluster
    private final LocalCluster cluster;
    private final KubernetesClient client;
    private GpuNodeSimulator simulator;
    private boolean closed;

    private SharedCluster(LocalControlPlane plane, LocalCluster cluster) {
        this.plane = plane;
        this.cluster = cluster;
        this.client = cluster.newClient();
    }

    /** The JVM's shared cluster, started (and the CRDs installed) on first use. */
    public static synchronized SharedCluster get() {
        if (startFailure != null) {
            throw new IllegalStateException(
                    "the local control plane failed to start earlier in this JVM: " + startFailure.getMessage(),
                    startFailure);
        }
        try {
            return getOrStart();
        } catch (RuntimeException | Error e) {
            startFailure = e;
            throw e;
        }
    }

    private static SharedCluster getOrStart() {
        if (instance == null || instance.closed) {
            String env = System.getenv("TENSORLANE_KUBECONFIG");
            SharedCluster s;
            if (env != null && !env.isBlank()) {
                Path kc = Path.of(env);
                if (!Files.isRegularFile(kc)) {
                    throw new IllegalStateException("TENSORLANE_KUBECONFIG=" + env
                            + " is not a file; run hack/local-cluster.sh up or unset it");
                }
                s = new SharedCluster(null, LocalCluster.fromKubeconfig(kc));
                log("attached to " + s.cluster.masterUrl() + " (TENSORLANE_KUBECONFIG)");
            } else {
                LocalControlPlane p = LocalControlPlane.start();
                s = new SharedCluster(p, p.cluster());
                log(String.format(
                        "control plane up in %.1f s at %s (state %s)",
                        p.startupTime().toMillis() / 1000.0, s.cluster.masterUrl(), p.stateDir()));
            }
            try {
                // any fabric8 client built later in this JVM without explicit config (e.g. an operator under test)
                // finds it
                System.setProperty("kubeconfig", s.cluster.kubeconfig().toString());
                long t0 = System.nanoTime();
                List<String> crds = Crds.install(s.client);
                log("CRDs installed in " + (System.nanoTime() - t0) / 1_000_000 + " ms: " + crds);
            } catch (RuntimeException | Error e) {
                s.close();
                throw e;
            }
            instance = s;
        }
        return instance;
    }

    public LocalCluster cluster() {
        return cluster;
    }

    /** The shared admin client; do not close it. */
    public KubernetesClient client() {
        return client;
    }

    /** The control plane this JVM started, or null when attached to an external one. */
    public LocalControlPlane plane() {
        return plane;
    }

    /** The shared simulator (namespace {@code tensorlane-sim}; node names prefixed {@code sim-<random>-}). */
    public synchronized GpuNodeSimulator simulator() {
        if (simulator == null) {
            String prefix = "sim-"
                    + HexFormat.of()
                            .toHexDigits((short) ThreadLocalRandom.current().nextInt()) + "-";
            simulator = new GpuNodeSimulator(
                            client,
                            GpuNodeSimulator.Options.defaults()
                                    .withNamePrefix(prefix)
                                    .withStartDelay(Duration.ofMillis(200))
                                    .withCrashLoopAfter(Duration.ofMillis(500)))
                    .start();
        }
        return simulator;
    }

    synchronized GpuNodeSimulator simulatorIfStarted() {
        return simulator;
    }

    /**
     * Stops the simulator (removing its nodes from an external cluster) and the control plane this JVM started, then
     * fails if any of its processes is still alive.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (simulator != null) {
            if (plane == null) {
                simulator.nodes().forEach(simulator::removeNode);
            }
            simulator.close();
        }
        client.close();
        if (plane != null) {
            plane.stop();
            List<ManagedProcess> left =
                    plane.processes().stream().filter(ManagedProcess::isAlive).toList();
            if (!left.isEmpty()) {
                throw new IllegalStateException("control-plane processes left behind after stop: " + left);
            }
            log("control plane stopped; no process left (" + plane.processes().size() + " checked)");
        }
    }

    private static void log(String msg) {
        System.err.println("[tensorlane-testkit] " + msg);
    }
}
