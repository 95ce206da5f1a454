package io.tensorlane.operator.bench;

import static io.tensorlane.operator.bench.OperatorBench.log;
import static io.tensorlane.operator.bench.OperatorBench.namespace;
import static io.tensorlane.operator.bench.OperatorBench.operator;
import static io.tensorlane.operator.bench.OperatorBench.secs;
import static io.tensorlane.operator.bench.OperatorBench.settings;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.javaoperatorsdk.operator.Operator;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.reconcile.StatusWrites;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.testkit.SharedCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.BiFunction;

/**
 * What one InferenceDeployment write costs the control plane. First N creates with no operator running. Then N
 * deployments are rolled out by the operator (their statuses are then real ones), the operator is stopped, and every
 * status is written again R times per way of writing it, from as many threads as the operator has reconcilers, each
 * write changing one condition's message; the variants run twice in turn. Prints the API server's and etcd's CPU per
 * write and the writes per second. Variants: server-side apply (the operator's own write,
 * {@link StatusWrites#apply}), a JSON merge patch of the whole status, an update (PUT) with the
 * resourceVersion, and server-side apply of the first write's form (status.topology.nodes listing every node).
 */
final class StatusWriteBench {
    private StatusWriteBench() {}

    static void run(KubernetesClient client, GpuNodeSimulator sim, int n, int nodes, int rounds) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(OperatorBench.threads());
        OperatorBench.addNodes(pool, sim, nodes);
        TensorlaneConfig settings = settings();
        ScaleBench.labelNodes(client, settings, nodes);
        CpuMeter cpu = new CpuMeter(SharedCluster.get().plane());
        // first what a create costs (no operator running: nothing else touches the objects)
        String created = namespace(client, "bench-create");
        Map<String, Double> k0 = cpu.sample();
        long createStart = System.nanoTime();
        OperatorBench.createAll(pool, client, created, n);
        double createWall = secs(createStart);
        Map<String, Double> k1 = cpu.sample();
        log(
                "RESULT status create: %d InferenceDeployments created in %.1f s (%.0f/s); per create kube-apiserver %.2f ms "
                        + "CPU, etcd %.2f ms; CPU %s",
                n,
                createWall,
                n / createWall,
                1000 * (k1.get("kube-apiserver") - k0.get("kube-apiserver")) / n,
                1000 * (k1.get("etcd") - k0.get("etcd")) / n,
                CpuMeter.between(k0, k1));
        ScaleBench.deleteAndWait(client, created);
        String ns = namespace(client, "bench-status");
        Operator op = operator(client, ns, settings, DecisionMetrics.inMemory());
        Map<String, InferenceDeployment> latest = new ConcurrentHashMap<>();
        try {
            OperatorBench.createAll(pool, client, ns, n);
            long t0 = System.nanoTime();
            while (client.resources(InferenceDeployment.class).inNamespace(ns).list().getItems().stream()
                            .filter(d -> d.getStatus() != null && d.getStatus().phase == Phase.Ready)
                            .count()
                    < n) {
                if (secs(t0) > 600) {
                    throw new IllegalStateException("not all Ready after 600 s");
                }
                Thread.sleep(1000);
            }
            Thread.sleep(5000); // the events written in the background
        } finally {
            op.stop();
        }
        client.resources(InferenceDeployment.class)
                .inNamespace(ns)
                .list()
                .getItems()
                .forEach(d -> latest.put(d.getMetadata().getName(), d));
        InferenceDeployment sample = latest.values().iterator().next();
        log(
                "status: %d deployments Ready; one object %d bytes as JSON (status %d bytes, managedFields %d bytes)",
                n,
                Serialization.asJson(sample).length(),
                Serialization.asJson(sample.getStatus()).length(),
                Serialization.asJson(sample.getMetadata().getManagedFields()).length());
        List<String> allNodes = List.copyOf(sim.nodes());
        Map<String, BiFunction<InferenceDeployment, InferenceDeploymentStatus, InferenceDeployment>> variants =
                new java.util.LinkedHashMap<>();
        variants.put("server-side apply", (d, s) -> StatusWrites.apply(client, d, s));
        variants.put(
                "JSON merge patch",
                (d, s) -> client.resource(d)
                        .subresource("status")
                        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"status\":" + Serialization.asJson(s) + "}"));
        variants.put("update (PUT)", (d, s) -> {
            InferenceDeployment copy = Serialization.clone(d);
            copy.setStatus(s);
            return client.resource(copy).subresource("status").update();
        });
        variants.put("server-side apply, every node listed", (d, s) -> {
            s.topology.nodes = new ArrayList<>(allNodes);
            return StatusWrites.apply(client, d, s);
        });
        int[] counter = {0};
        for (int repeat = 0; repeat < 2; repeat++) {
            for (var v : variants.entrySet()) {
                Map<String, Double> c0 = cpu.sample();
                long w0 = System.nanoTime();
                for (int r = 0; r < rounds; r++) {
                    int k = ++counter[0];
                    List<Future<?>> fs = new ArrayList<>();
                    for (String name : latest.keySet()) {
                        fs.add(pool.submit(() -> {
                            InferenceDeployment d = latest.get(name);
                            InferenceDeploymentStatus s = Serialization.clone(d.getStatus());
                            s.conditions.get(0).setMessage("write " + k);
                            latest.put(name, v.getValue().apply(d, s));
                        }));
                    }
                    for (var f : fs) {
                        f.get();
                    }
                }
                double wall = secs(w0);
                Map<String, Double> c1 = cpu.sample();
                int writes = rounds * latest.size();
                log(
                        "RESULT status %s: %d writes in %.1f s (%.0f/s); per write kube-apiserver %.2f ms CPU, etcd %.2f ms, "
                                + "this JVM %.2f ms; CPU %s",
                        v.getKey(),
                        writes,
                        wall,
                        writes / wall,
                        1000 * (c1.get("kube-apiserver") - c0.get("kube-apiserver")) / writes,
                        1000 * (c1.get("etcd") - c0.get("etcd")) / writes,
                        1000 * (c1.get("bench JVM") - c0.get("bench JVM")) / writes,
                        CpuMeter.between(c0, c1));
            }
        }
        InferenceDeployment after = latest.values().iterator().next();
        log(
                "status: after the runs one object %d bytes as JSON (managedFields %d bytes)",
                Serialization.asJson(after).length(),
                Serialization.asJson(after.getMetadata().getManagedFields()).length());
        client.namespaces().withName(ns).delete();
        pool.shutdownNow();
    }
}
