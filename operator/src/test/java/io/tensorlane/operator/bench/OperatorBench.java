package io.tensorlane.operator.bench;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.TopologyLabels;
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
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 *       resource ({@link RequestCounter} on its client): writes per first rollout, and in the no-op period.
 *   <li>oom: {@link OomBench}.
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
                scale(
                        client,
                        sim,
                        Integer.getInteger("bench.deployments", 1000),
                        Integer.getInteger("bench.nodes", 200),
                        Integer.getInteger("bench.noop-seconds", 60));
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

    static void scale(KubernetesClient client, GpuNodeSimulator sim, int n, int nodes, int noopSeconds)
            throws Exception {
        log(
                "scale: %d InferenceDeployments over %d simulated nodes (%s)",
                n, nodes, TopologyFixtures.RTX_PRO_6000_PCIE_8);
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<java.util.concurrent.Future<?>> fs = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            fs.add(pool.submit(() -> sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8)));
        }
        for (var f : fs) {
            f.get();
        }
        log("  %d nodes registered in %.1f s", nodes, secs(t0));
        DecisionMetrics metrics = DecisionMetrics.inMemory();
        TensorlaneConfig settings = settings();
        labelNodes(client, settings, nodes);
        CpuMeter cpu = new CpuMeter(SharedCluster.get().plane());
        log(
                "  load average %s",
                Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim());
        double baseline = Double.NaN;
        int rounds = Integer.getInteger("bench.baseline-rounds", 2);
        for (int round = 1; round <= rounds; round++) {
            // the first of two rounds warms this JVM (JIT, the client's and the simulator's code paths) the way a
            // running
            // operator's JVM is warm; only the client, informer and simulator code is warmed, not the operator's
            // reconciler
            String base = namespace(client, "bench-base");
            Map<String, Double> cpu0 = cpu.sample();
            baseline = ControlPlaneBaseline.run(client, base, n, threads(), List.copyOf(sim.nodes()));
            log(
                    "%s scale baseline round %d/%d (no operator): the same %d Deployments + Services applied directly, all pods "
                            + "Ready %.1f s after the first apply; CPU %s",
                    round == rounds ? "RESULT" : "warm-up",
                    round,
                    rounds,
                    n,
                    baseline,
                    CpuMeter.between(cpu0, cpu.sample()));
            deleteAndWait(client, base);
        }
        String ns = namespace(client, "bench-scale");
        // the operator gets a client of its own whose every request is counted by verb and resource
        RequestCounter requests = new RequestCounter();
        KubernetesClient operatorClient = new KubernetesClientBuilder()
                .withConfig(client.getConfiguration())
                .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("bench-requests", requests))
                .build();
        Operator op = operator(operatorClient, ns, settings, metrics);
        // one cache only (the bench polls it for Ready); Deployments and Services are listed twice around the no-op
        // period
        // instead of watched: a watch of its own would add the bench's decoding of every kube-controller-manager status
        // update to the CPU this 2-core machine shares with the control plane and the operator
        SharedIndexInformer<InferenceDeployment> infds =
                client.resources(InferenceDeployment.class).inNamespace(ns).inform();
        try {
            Map<String, Double> cpu0 = cpu.sample();
            Map<String, Double> threads0 = CpuMeter.threads();
            long c0 = System.nanoTime();
            fs.clear();
            for (int i = 0; i < n; i++) {
                InferenceDeployment d = small(ns, "d" + i, "0.80");
                fs.add(pool.submit(() -> client.resource(d).create()));
            }
            for (var f : fs) {
                f.get();
            }
            log("  %d created in %.1f s", n, secs(c0));
            long lastReport = 0;
            while (true) {
                var list = infds.getStore().list();
                long ready = list.stream()
                        .filter(d -> d.getStatus() != null && d.getStatus().phase == Phase.Ready)
                        .count();
                long stable = list.stream()
                        .filter(d -> d.getStatus() != null
                                && d.getStatus().lastStableSpec != null
                                && d.getStatus().lastStableSpec.revision.equals(d.getStatus().revision))
                        .count();
                if (secs(c0) - lastReport >= 10) {
                    lastReport = (long) secs(c0);
                    Map<String, Long> r = requests.snapshot();
                    log(
                            "  t=%.0f s: %d Ready, %d stable, %d reconciles; the operator sent %d status writes, %d Deployment "
                                    + "applies, %d events",
                            secs(c0),
                            ready,
                            stable,
                            RECONCILES.get(),
                            r.getOrDefault("PATCH inferencedeployments/status", 0L),
                            r.getOrDefault("PATCH deployments", 0L),
                            r.getOrDefault("POST events", 0L) + r.getOrDefault("PATCH events", 0L));
                }
                if (ready == n && stable == n) {
                    break;
                }
                if (secs(c0) > 900) {
                    throw new IllegalStateException("not all Ready after 900 s: " + ready + "/" + n);
                }
                Thread.sleep(500);
            }
            double allReady = secs(c0);
            Map<String, Long> atReady = requests.snapshot();
            log(
                    "RESULT scale: all %d Ready (and stable) %.1f s after the first create; %d reconciles = %.1f reconciles/s; "
                            + "CPU %s; load average %s",
                    n,
                    allReady,
                    RECONCILES.get(),
                    RECONCILES.get() / allReady,
                    CpuMeter.between(cpu0, cpu.sample()),
                    Files.readString(java.nio.file.Path.of("/proc/loadavg")).trim());
            log("RESULT scale: the bench JVM's CPU by thread: %s", CpuMeter.top(threads0, CpuMeter.threads(), 8));
            long e0 = System.nanoTime();
            while (RECONCILER.get().pendingEvents() > 0 && secs(e0) < 600) {
                Thread.sleep(200);
            }
            log(
                    "RESULT scale: the operator's events (written in the background) all written %.1f s after all Ready",
                    secs(c0) - allReady);
            Thread.sleep(3000);
            Map<String, Long> firstRollout = requests.snapshot();
            long writesAtReady = RequestCounter.writes(atReady);
            long writes = RequestCounter.writes(firstRollout);
            log(
                    "RESULT scale: operator / baseline = %.2f (%.1f s / %.1f s on the same control plane and nodes); writes per "
                            + "first rollout %.2f (%.2f until all Ready, %.2f after)",
                    allReady / baseline,
                    allReady,
                    baseline,
                    writes / (double) n,
                    writesAtReady / (double) n,
                    (writes - writesAtReady) / (double) n);
            log(
                    "RESULT scale: writes per first rollout by verb and resource: %s",
                    RequestCounter.perObject(firstRollout, n));
            log("RESULT scale: every request of the operator's client until then: %s", firstRollout);
            Map<String, Long> noop0 = requests.snapshot();
            Map<String, String> before = versions(client, ns);
            long eventsBefore = client.v1().events().inNamespace(ns).list().getItems().stream()
                    .filter(e -> "tensorlane-operator".equals(e.getReportingComponent()))
                    .count();
            double status0 = metrics.count("tensorlane.applies", "kind", "InferenceDeployment/status");
            long r0 = RECONCILES.get();
            double applies0 = metrics.count("tensorlane.applies");
            Thread.sleep(noopSeconds * 1000L);
            Map<String, Long> noop = RequestCounter.minus(requests.snapshot(), noop0);
            Map<String, String> after = versions(client, ns);
            Map<String, Long> changed = new java.util.TreeMap<>();
            after.forEach((k, v) -> {
                if (!v.equals(before.get(k))) {
                    changed.merge(k.substring(0, k.indexOf('/')), 1L, Long::sum);
                }
            });
            long operatorEvents = client.v1().events().inNamespace(ns).list().getItems().stream()
                            .filter(e -> "tensorlane-operator".equals(e.getReportingComponent()))
                            .count()
                    - eventsBefore;
            log(
                    "RESULT scale: no-op period %d s: operator writes %.0f (status %.0f, children %.0f), operator events %d, "
                            + "reconciles %d; resourceVersion changes by anyone per kind %s (of %d objects)",
                    noopSeconds,
                    metrics.count("tensorlane.applies") - applies0,
                    metrics.count("tensorlane.applies", "kind", "InferenceDeployment/status") - status0,
                    metrics.count("tensorlane.applies")
                            - applies0
                            - (metrics.count("tensorlane.applies", "kind", "InferenceDeployment/status") - status0),
                    operatorEvents,
                    RECONCILES.get() - r0,
                    changed,
                    after.size());
            log(
                    "RESULT scale: no-op period: the operator's client sent %d writes; every request %s",
                    RequestCounter.writes(noop), noop);
            for (int i = 0; i < 3; i++) { // the bench's own informers are part of this JVM's heap too
                System.gc();
                Thread.sleep(300);
            }
            long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            op.stop(); // what the operator held (its caches, controllers) is what this frees
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(300);
            }
            long without =
                    ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
            log(
                    "RESULT scale: heap after GC %.1f MiB for operator + simulator + the bench's own informers in one JVM; "
                            + "%.1f MiB freed by stopping the operator (its share); max %d MiB",
                    heap / 1048576.0,
                    (heap - without) / 1048576.0,
                    Runtime.getRuntime().maxMemory() / 1048576);
        } finally {
            op.stop();
            operatorClient.close();
            infds.close();
            try {
                client.namespaces().withName(ns).delete();
            } catch (RuntimeException e) {
                log("  could not delete namespace %s: %s", ns, e.getMessage());
            }
            pool.shutdownNow();
        }
    }

    /**
     * Lets the operator's node labeller label the simulated nodes before anything is timed, as a running operator has long
     * done in a real cluster (the baseline's node affinity needs the labels too).
     */
    static void labelNodes(KubernetesClient client, TensorlaneConfig settings, int nodes) throws InterruptedException {
        long t0 = System.nanoTime();
        Operator labeller = new Operator(o -> o.withKubernetesClient(client).withCloseClientOnStop(false));
        labeller.register(new GpuTopologyNodeLabeller(settings, DecisionMetrics.inMemory()));
        labeller.start();
        try {
            while (client.nodes()
                            .withLabel(TopologyLabels.INTERCONNECT)
                            .list()
                            .getItems()
                            .size()
                    < nodes) {
                if (secs(t0) > 300) {
                    throw new IllegalStateException("nodes not labelled after 300 s");
                }
                Thread.sleep(500);
            }
        } finally {
            labeller.stop();
        }
        log("  %d nodes labelled in %.1f s", nodes, secs(t0));
    }

    /**
     * Deletes a namespace and waits until it is gone: its pods (their GPUs free again) and everything else the namespace
     * controller deletes, so that none of that work overlaps the next timed phase.
     */
    static void deleteAndWait(KubernetesClient client, String ns) throws InterruptedException {
        long t0 = System.nanoTime();
        client.namespaces().withName(ns).delete();
        while (client.namespaces().withName(ns).get() != null) {
            if (secs(t0) > 900) {
                throw new IllegalStateException("namespace " + ns + " still there after 900 s");
            }
            Thread.sleep(1000);
        }
        log("  %s deleted and gone in %.1f s", ns, secs(t0));
    }

    /** resourceVersions of every InferenceDeployment, Deployment and Service in {@code ns} (any write changes one). */
    static Map<String, String> versions(KubernetesClient client, String ns) {
        Map<String, String> m = new ConcurrentHashMap<>();
        List<HasMetadata> all = new ArrayList<>();
        all.addAll(client.resources(InferenceDeployment.class)
                .inNamespace(ns)
                .list()
                .getItems());
        all.addAll(client.apps().deployments().inNamespace(ns).list().getItems());
        all.addAll(client.services().inNamespace(ns).list().getItems());
        all.forEach(o -> m.put(
                o.getKind() + "/" + o.getMetadata().getName(), o.getMetadata().getResourceVersion()));
        return m;
    }

    static double secs(long t0) {
        return (System.nanoTime() - t0) / 1e9;
    }

    static void log(String fmt, Object... a) {
        System.out.println("[bench] " + String.format(fmt, a));
    }
}
