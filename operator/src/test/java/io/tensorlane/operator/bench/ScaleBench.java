package io.tensorlane.operator.bench;

import static io.tensorlane.operator.bench.OperatorBench.RECONCILER;
import static io.tensorlane.operator.bench.OperatorBench.RECONCILES;
import static io.tensorlane.operator.bench.OperatorBench.log;
import static io.tensorlane.operator.bench.OperatorBench.namespace;
import static io.tensorlane.operator.bench.OperatorBench.operator;
import static io.tensorlane.operator.bench.OperatorBench.secs;
import static io.tensorlane.operator.bench.OperatorBench.settings;
import static io.tensorlane.operator.bench.OperatorBench.threads;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.Operator;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.plan.TopologyLabels;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.operator.topology.GpuTopologyNodeLabeller;
import io.tensorlane.testkit.SharedCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** The scale benchmark of {@link OperatorBench}: N InferenceDeployments on M simulated nodes, against the baseline. */
final class ScaleBench {
    private ScaleBench() {}

    static void scale(KubernetesClient client, GpuNodeSimulator sim, int n, int nodes, int noopSeconds)
            throws Exception {
        log(
                "scale: %d InferenceDeployments over %d simulated nodes (%s)",
                n, nodes, TopologyFixtures.RTX_PRO_6000_PCIE_8);
        long t0 = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        OperatorBench.addNodes(pool, sim, nodes);
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
            OperatorBench.createAll(pool, client, ns, n);
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
}
