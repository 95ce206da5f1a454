package io.tensorlane.testkit;

import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Shared workloads and waits of the simulated-cluster tests: GPU Deployments, pod readiness, per-test clean-up. */
final class SimulatedWorkloads {
    static final long WAIT_S = 60;

    private SimulatedWorkloads() {}

    /**
     * Each test sees only its own workloads and nodes: scheduling assertions depend on which GPUs are free, and a
     * Deployment left in the class's namespace would re-create its pods on the next test's nodes.
     */
    static void cleanUp(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.clearRules();
        client.apps().deployments().inNamespace(ns.name()).delete();
        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withPropagationPolicy(DeletionPropagation.BACKGROUND)
                .delete();
        client.apps()
                .replicaSets()
                .inNamespace(ns.name())
                .informOnCondition(List::isEmpty)
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();
        sim.nodes().forEach(sim::removeNode);
    }

    static Deployment gpuDeployment(String name, int replicas, int gpus, String... args) {
        return new DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withReplicas(replicas)
                .withNewSelector()
                .addToMatchLabels("app", name)
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("app", name)
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("server")
                .withImage("tensorlane/runtime:test")
                .withArgs(args)
                .withNewResources()
                .addToLimits("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))
                .endResources()
                .endContainer()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    static List<Pod> pods(KubernetesClient c, TestNamespace ns, String app) {
        return c.pods().inNamespace(ns.name()).withLabel("app", app).list().getItems();
    }

    static boolean ready(Pod p) {
        return p.getStatus() != null
                && p.getStatus().getConditions() != null
                && p.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    static List<Pod> awaitPods(KubernetesClient c, TestNamespace ns, String app, int n, Predicate<Pod> each) {
        return c.pods()
                .inNamespace(ns.name())
                .withLabel("app", app)
                .informOnCondition(l -> l.size() == n && l.stream().allMatch(each))
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();
    }

    static String waitingReason(Pod p) {
        var st = p.getStatus().getContainerStatuses();
        return st == null || st.isEmpty() || st.get(0).getState().getWaiting() == null
                ? null
                : st.get(0).getState().getWaiting().getReason();
    }

    static io.fabric8.kubernetes.api.model.ContainerStateTerminated lastTermination(Pod p) {
        var st = p.getStatus().getContainerStatuses();
        return st == null || st.isEmpty() || st.get(0).getLastState() == null
                ? null
                : st.get(0).getLastState().getTerminated();
    }
}
