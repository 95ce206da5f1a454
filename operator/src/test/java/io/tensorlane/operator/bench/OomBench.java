package io.tensorlane.operator.bench;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.Operator;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The OOM benchmark ({@code hack/bench-operator.sh oom}): R deployments start with a fraction the simulator answers
 * with a CUDA OOM; the time from the simulator terminating the pod (seen by an informer in this JVM) to the Deployment
 * carrying the remediated template.
 */
final class OomBench {
    private OomBench() {}

    static void run(KubernetesClient client, GpuNodeSimulator sim, int runs) throws Exception {
        int nodes = Math.max(1, (runs + 7) / 8);
        OperatorBench.log("oom: %d runs (batches of 10) on %d simulated nodes", runs, nodes);
        for (int i = 0; i < nodes; i++) {
            sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        }
        String ns = OperatorBench.namespace(client, "bench-oom");
        sim.addRule(SimRule.forAllPods("bench-oom", SimAction.cudaOom())
                .inNamespace(ns)
                .withMemoryFractionAtLeast(0.93)
                .withDelayMillis(500));
        Map<String, Long> oomAt = new ConcurrentHashMap<>();
        Map<String, Long> patchedAt = new ConcurrentHashMap<>();
        Map<String, String> firstRevision = new ConcurrentHashMap<>();
        SharedIndexInformer<Pod> pods = client.pods()
                .inNamespace(ns)
                .inform(
                        new Handler<>(p -> {
                            String owner = p.getMetadata().getLabels().get("app.kubernetes.io/instance");
                            if (owner != null && StatusAggregator.badPod(p).isPresent()) {
                                oomAt.putIfAbsent(owner, System.nanoTime());
                            }
                        }),
                        0);
        SharedIndexInformer<Deployment> deps = client.apps()
                .deployments()
                .inNamespace(ns)
                .inform(
                        new Handler<>(d -> {
                            String rev = d.getSpec()
                                    .getTemplate()
                                    .getMetadata()
                                    .getLabels()
                                    .get(Renderer.LABEL_REVISION);
                            String first =
                                    firstRevision.putIfAbsent(d.getMetadata().getName(), rev);
                            if (first != null && !first.equals(rev)) {
                                patchedAt.putIfAbsent(d.getMetadata().getName(), System.nanoTime());
                            }
                        }),
                        0);
        TensorlaneConfig settings = OperatorBench.settings();
        Operator op = OperatorBench.operator(client, ns, settings, DecisionMetrics.inMemory());
        try {
            for (int b = 0; b < runs; b += 10) {
                for (int i = b; i < Math.min(runs, b + 10); i++) {
                    client.resource(OperatorBench.small(ns, "oom" + i, "0.95")).create();
                }
                long t0 = System.nanoTime();
                int end = Math.min(runs, b + 10);
                while (patchedAt.size() < end && OperatorBench.secs(t0) < 120) {
                    Thread.sleep(200);
                }
                for (int i = b; i < end; i++) { // free the GPUs for the next batch
                    client.resources(InferenceDeployment.class)
                            .inNamespace(ns)
                            .withName("oom" + i)
                            .delete();
                }
            }
            List<Double> ms = new ArrayList<>();
            patchedAt.forEach((name, t) -> {
                Long o = oomAt.get(name);
                if (o != null) {
                    ms.add((t - o) / 1e6);
                }
            });
            ms.sort(Double::compare);
            if (ms.isEmpty()) {
                throw new IllegalStateException("no run completed");
            }
            OperatorBench.log(
                    "RESULT oom: %d of %d runs measured; OOM seen -> Deployment patched: p50 %.0f ms, p95 %.0f ms, max %.0f ms",
                    ms.size(),
                    runs,
                    ms.get(ms.size() / 2),
                    ms.get((int) Math.min(ms.size() - 1, Math.ceil(ms.size() * 0.95) - 1)),
                    ms.get(ms.size() - 1));
        } finally {
            op.stop();
            pods.close();
            deps.close();
            sim.clearRules();
            client.namespaces().withName(ns).delete();
        }
    }

    record Handler<T>(java.util.function.Consumer<T> on) implements ResourceEventHandler<T> {
        @Override
        public void onAdd(T obj) {
            on.accept(obj);
        }

        @Override
        public void onUpdate(T oldObj, T newObj) {
            on.accept(newObj);
        }

        @Override
        public void onDelete(T obj, boolean deletedFinalStateUnknown) {}
    }
}
