package io.tensorlane.operator.bench;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.modelfacts.HubClient;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.model.ModelInspector;
import io.tensorlane.operator.model.ModelResolution;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.plan.PlannerSettings;
import io.tensorlane.operator.render.Rendered;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.topology.TopologyFixtures;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The scale benchmark's baseline, measured in the same run on the same control plane and nodes: the Deployments and
 * Services the operator would render for the same N InferenceDeployments, applied straight to the API server (server-side
 * apply, as many threads as the operator has reconcilers) with no operator running, timed until every pod is Ready.
 * What is left of the operator's time after this is the operator's own cost: planning, its status writes and events,
 * and noticing the pods.
 */
final class ControlPlaneBaseline {
    private ControlPlaneBaseline() {}

    /** Seconds from the first apply until all {@code n} pods are Ready. The namespace is left for the caller to delete. */
    static double run(KubernetesClient client, String ns, int n, int threads, List<String> nodeNames) throws Exception {
        InferenceDeployment template = OperatorBench.small(ns, "template", "0.80");
        String fixture = TopologyFixtures.RTX_PRO_6000_PCIE_8;
        List<NodeInfo> nodes = nodeNames.stream()
                .map(name -> new NodeInfo(name, Map.of(), 8, 0, TopologyFixtures.load(fixture), false))
                .toList();
        // the model facts the operator reads from the Hub (the sample carries no geometry), read once here as well
        TensorlaneConfig render = OperatorBench.settings();
        var source = ModelSource.of(template.getSpec().model.source, template.getSpec().model.name);
        var read = new ModelInspector(
                        new HubClient(
                                URI.create(OperatorBench.HUB.endpoint()),
                                render.model().requestTimeout(),
                                "tensorlane-bench",
                                ModelInspector.TOKEN_HINT),
                        Clock.systemUTC())
                .inspect(source, null);
        if (!(read instanceof ModelInspector.Inspection.Known known)) {
            throw new IllegalStateException("baseline: the model could not be read: " + read);
        }
        ModelStatus model = known.status();
        InferenceDeploymentSpec spec = ModelResolution.fill(template.getSpec(), model);
        Plan plan = Planner.plan(
                spec, nodes, new PlannerSettings(Instant.now(), render.measurementMaxAge(), EngineProfiles::problem));
        if (!plan.ok()) {
            throw new IllegalStateException("baseline plan failed: " + plan.message());
        }
        List<HasMetadata> objects = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            InferenceDeployment owner = OperatorBench.small(ns, "b" + i, "0.80");
            owner.getMetadata().setUid(UUID.randomUUID().toString());
            Rendered r = Renderer.render(owner, spec, plan, render, model);
            for (HasMetadata o : List.of(r.deployment(), r.service())) {
                o.getMetadata().setOwnerReferences(null); // no owner exists: the garbage collector would delete them
                objects.add(o);
            }
        }
        SharedIndexInformer<Pod> pods = client.pods().inNamespace(ns).inform();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long t0 = System.nanoTime();
            List<Future<?>> fs = new ArrayList<>();
            for (HasMetadata o : objects) { // Deployment then Service per object, as a reconciler applies them
                fs.add(pool.submit(() -> client.resource(o)
                        .fieldManager(TensorlaneConfig.FIELD_MANAGER)
                        .forceConflicts()
                        .serverSideApply()));
            }
            for (Future<?> f : fs) {
                f.get();
            }
            OperatorBench.log("  baseline: %d Deployments + Services applied in %.1f s", n, OperatorBench.secs(t0));
            long lastReport = 0;
            while (true) {
                long ready = pods.getStore().list().stream()
                        .filter(ControlPlaneBaseline::ready)
                        .count();
                if (ready >= n) {
                    return OperatorBench.secs(t0);
                }
                if (OperatorBench.secs(t0) - lastReport >= 10) {
                    lastReport = (long) OperatorBench.secs(t0);
                    OperatorBench.log("  baseline t=%.0f s: %d pods Ready", OperatorBench.secs(t0), ready);
                }
                if (OperatorBench.secs(t0) > 900) {
                    throw new IllegalStateException("baseline: not all pods Ready after 900 s: " + ready + "/" + n);
                }
                Thread.sleep(500);
            }
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(10, TimeUnit.SECONDS);
            pods.close();
        }
    }

    static boolean ready(Pod p) {
        return StatusAggregator.podReady(p) && StatusAggregator.badPod(p).isEmpty();
    }
}
