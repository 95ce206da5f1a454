package io.tensorlane.operator.bench;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.reconcile.InferenceDeploymentReconciler;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.topology.GpuTopologyNodeLabeller;
import io.tensorlane.testkit.RepoRoot;
import io.tensorlane.testkit.SharedCluster;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.hub.SampleModels;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The operator benchmarks of issues 4 and 5, against the local control plane with simulated GPU nodes (not part of
 * the test run; {@code hack/bench-operator.sh}). Prints figures only.
 *
 * <ul>
 *   <li>scale: N InferenceDeployments (TP 1) over M simulated 8-GPU PCIe nodes — time until all Ready, reconciles/s,
 *       the ratio to {@link ControlPlaneBaseline} (the same Deployments and Services applied with no operator, in the
 *       same run, after a JVM warm-up round), API writes (resourceVersion changes of every InferenceDeployment,
 *       Deployment and Service, plus Events) during a no-op period, heap after GC; the operator's requests by verb and
 *       resource ({@link RequestCounter} on its client): writes per first rollout, and in the no-op period:
 *       {@link ScaleBench}.
 *   <li>oom: {@link OomBench}.
 *   <li>status (not in all): {@link StatusWriteBench}, what one status write costs the control plane.
 * </ul>
 * Arguments: {@code scale|oom|all}; system properties {@code bench.deployments} (1000), {@code bench.nodes} (200),
 * {@code bench.noop-seconds} (60), {@code bench.oom-runs} (50), {@code bench.threads} (30), {@code bench.baseline-rounds}
 * (2; 0 skips the baseline).
 */
public final class OperatorBench {
    /** The sample models on a loopback Hub (the samples carry no geometry: the operator reads it). */
    static final LocalHub HUB = startHub();

    static final AtomicLong RECONCILES = new AtomicLong();
    static final java.util.concurrent.atomic.AtomicReference<Counting> RECONCILER =
            new java.util.concurrent.atomic.AtomicReference<>();

    /** The real reconciler, counting its calls. */
    @ControllerConfiguration(name = InferenceDeploymentReconciler.NAME, fieldManager = TensorlaneConfig.FIELD_MANAGER)
    static final class Counting extends InferenceDeploymentReconciler {
        Counting(TensorlaneConfig s, DecisionMetrics m) {
            super(s, m);
        }

        @Override
        public UpdateControl<InferenceDeployment> reconcile(InferenceDeployment p, Context<InferenceDeployment> c) {
            RECONCILES.incrementAndGet();
            return super.reconcile(p, c);
        }
    }

    private static LocalHub startHub() {
        try {
            return SampleModels.serve(new LocalHub());
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        String what = args.length == 0 ? "all" : args[0];
        SharedCluster shared = SharedCluster.get();
        // a client of its own with generous timeouts: 1,000 objects on a 2-core control plane make big lists slow
        Config config =
                Config.fromKubeconfig(null, Files.readString(shared.cluster().kubeconfig()), null);
        config.setRequestTimeout(120_000);
        config.setConnectionTimeout(30_000);
        KubernetesClient client =
                new KubernetesClientBuilder().withConfig(config).build();
        GpuNodeSimulator sim = shared.simulator();
        int code = 0;
        try {
            if (what.equals("scale") || what.equals("all")) {
                ScaleBench.scale(
                        client,
                        sim,
                        Integer.getInteger("bench.deployments", 1000),
                        Integer.getInteger("bench.nodes", 200),
                        Integer.getInteger("bench.noop-seconds", 60));
            }
            if (what.equals("status")) {
                StatusWriteBench.run(
                        client,
                        sim,
                        Integer.getInteger("bench.deployments", 200),
                        Integer.getInteger("bench.nodes", 60),
                        Integer.getInteger("bench.rounds", 3));
            }
            if (what.equals("oom") || what.equals("all")) {
                OomBench.run(client, sim, Integer.getInteger("bench.oom-runs", 50));
            }
        } catch (Exception e) {
            e.printStackTrace();
            code = 1;
        } finally {
            sim.nodes().forEach(sim::removeNode);
            client.close();
            shared.close();
        }
        System.exit(code);
    }

    /** The benchmark's configuration: no preflight gate, 5 s requeue, the loopback Hub, runtime image ...:bench. */
    static TensorlaneConfig settings() {
        return TestConfig.with(
                "tensorlane.preflight.enabled",
                "false",
                "tensorlane.requeue-while-rolling-out",
                "5s",
                "tensorlane.runtime-image",
                "tensorlane/tensorlane-runtime:bench",
                "tensorlane.model.hub-endpoint",
                HUB.endpoint());
    }

    static Operator operator(KubernetesClient client, String ns, TensorlaneConfig settings, DecisionMetrics metrics) {
        Operator op = new Operator(o -> o.withKubernetesClient(client)
                .withCloseClientOnStop(false)
                .withConcurrentReconciliationThreads(threads())); // the app's default (application.properties)
        Counting reconciler = new Counting(settings, metrics);
        RECONCILER.set(reconciler);
        op.register(reconciler, o -> o.settingNamespace(ns));
        op.register(new GpuTopologyNodeLabeller(settings, metrics));
        op.start();
        return op;
    }

    /** Reconciler threads (and the baseline's writer threads): the app's default, 30, unless -Dbench.threads. */
    static int threads() {
        return Integer.getInteger("bench.threads", 30);
    }

    static String namespace(KubernetesClient client, String prefix) {
        String ns = prefix + "-" + Long.toString(System.currentTimeMillis() % 1_000_000, 36);
        client.namespaces()
                .resource(new NamespaceBuilder()
                        .withNewMetadata()
                        .withName(ns)
                        .endMetadata()
                        .build())
                .create();
        client.serviceAccounts()
                .inNamespace(ns)
                .withName("default")
                .waitUntilCondition(
                        sa -> sa != null
                                && sa.getSecrets() != null
                                && !sa.getSecrets().isEmpty(),
                        60,
                        TimeUnit.SECONDS);
        return ns;
    }

    static InferenceDeployment small(String ns, String name, String fraction) throws Exception {
        try (InputStream in =
                Files.newInputStream(RepoRoot.require().resolve("manifests/samples/llama-3.1-8b-2gpu.yaml"))) {
            InferenceDeployment d = Serialization.unmarshal(in, InferenceDeployment.class);
            d.getMetadata().setName(name);
            d.getMetadata().setNamespace(ns);
            d.getSpec().parallelism.tensor = 1;
            d.getSpec().replicas = 1;
            d.getSpec().memory.fraction = fraction;
            d.getSpec().rollout.stabilityWindowSeconds = 0;
            return d;
        }
    }

    /** Registers {@code nodes} simulated 8-GPU PCIe nodes, {@code pool}'s threads at once. */
    static void addNodes(java.util.concurrent.ExecutorService pool, GpuNodeSimulator sim, int nodes) throws Exception {
        all(pool, nodes, i -> sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8));
    }

    /** Creates the {@code n} InferenceDeployments d0 ... of {@link #small} (fraction 0.80) in {@code ns}, in parallel. */
    static void createAll(java.util.concurrent.ExecutorService pool, KubernetesClient client, String ns, int n)
            throws Exception {
        all(pool, n, i -> client.resource(small(ns, "d" + i, "0.80")).create());
    }

    /** Runs {@code task} for 0 ... n - 1 on {@code pool} and waits for all (rethrowing the first failure). */
    private static void all(java.util.concurrent.ExecutorService pool, int n, Task task) throws Exception {
        List<java.util.concurrent.Future<?>> fs = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            fs.add(pool.submit(() -> {
                task.run(k);
                return null;
            }));
        }
        for (var f : fs) {
            f.get();
        }
    }

    @FunctionalInterface
    private interface Task {
        void run(int i) throws Exception;
    }

    static double secs(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    static void log(String fmt, Object... a) {
        System.out.println("[bench] " + String.format(fmt, a));
    }
}
