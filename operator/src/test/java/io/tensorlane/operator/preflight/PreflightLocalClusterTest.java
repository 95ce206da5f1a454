package io.tensorlane.operator.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.Operator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.reconcile.InferenceDeploymentReconciler;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.PodStatuses;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The preflight on a real API server (kube-apiserver + controller-manager with the Job controller + scheduler from
 * hack/testkit) with a simulated PCIe node: the InferenceDeployment reconciler plans the custom allreduce and holds the
 * first rollout, the preflight reconciler runs the Job, the simulator plays its pod (succeed / fail / hang), the result
 * lands in GpuTopology.status.measurement and the rollout goes ahead with the measured table or with NCCL.
 */
@WithLocalCluster
class PreflightLocalClusterTest {
    static final long WAIT_S = 60;
    static final Map<String, String> PREFLIGHT_PODS = Map.of(PreflightJobs.COMPONENT_LABEL, PreflightJobs.COMPONENT);
    static final String OK_JSON = "{\"worldSize\":8,\"p2pVerified\":true,\"selftestPassed\":true,"
            + "\"algorithmTable\":[{\"upToBytes\":262144,\"algorithm\":\"OneStage\"},{\"upToBytes\":8388608,\"algorithm\":\"Ring\"}],"
            + "\"latencies\":[{\"bytes\":43008,\"customMicros\":23.0,\"ncclMicros\":201.0,\"algorithm\":\"OneStage\"}]}";
    /** Deadline of the test's Jobs: the hang test waits this long (plus the grace) at most. */
    static final Duration DEADLINE = Duration.ofSeconds(6);

    static Operator operator;

    @BeforeAll
    static void startOperator(KubernetesClient client) {
        TensorlaneConfig settings = TestConfig.with(
                "tensorlane.model.hub-endpoint",
                "http://127.0.0.1:9",
                "tensorlane.requeue-while-rolling-out",
                "2s",
                "tensorlane.preflight.deadline",
                DEADLINE.toSeconds() + "s",
                "tensorlane.preflight.grace",
                "4s",
                "tensorlane.preflight.recheck",
                "1s");
        operator = new Operator(o ->
                o.withKubernetesClient(client).withCloseClientOnStop(false).withUseSSAToPatchPrimaryResource(true));
        operator.register(new InferenceDeploymentReconciler(settings, new DecisionMetrics(new SimpleMeterRegistry())));
        operator.register(new PreflightReconciler(settings));
        operator.start();
    }

    @AfterAll
    static void stopOperator() {
        if (operator != null) {
            operator.stop();
        }
    }

    @AfterEach
    void cleanUp(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.clearRules();
        client.resources(InferenceDeployment.class).inNamespace(ns.name()).delete();
        sim.nodes().forEach(sim::removeNode);
    }

    @Test
    void successRecordsTheMeasurementAndRollsOutWithTheMeasuredTable(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        String node = sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        // the simulated kubelet starts the pod (Running); the test then plays the container exiting 0 with its result
        sim.addRule(SimRule.forAllPods("preflight-runs", SimAction.hang())
                .inNamespace(ns.name())
                .withLabels(PREFLIGHT_PODS));
        create(client, ns, "ok");

        Job job = awaitJob(client, ns, "ok");
        assertJobShape(job, node);
        Pod pod = awaitPreflightPod(
                client, ns, "ok", p -> "Running".equals(p.getStatus().getPhase()));
        assertThat(deployment(client, ns, "ok"))
                .as("the first rollout waits for the preflight")
                .isNull();
        finishPod(client, pod, 0, OK_JSON);

        Measurement m = awaitMeasurement(client, node);
        assertThat(m.failure).isNull();
        assertThat(m.p2pVerified).isTrue();
        assertThat(m.selftestPassed).isTrue();
        assertThat(m.worldSize).isEqualTo(8);
        assertThat(m.algorithmTable).extracting(r -> r.algorithm).containsExactly("OneStage", "Ring");
        assertThat(m.latencies).hasSize(1);
        assertThat(Instant.parse(m.time)).isBefore(Instant.now().plusSeconds(1));

        Deployment d = awaitDeployment(client, ns, "ok");
        assertThat(env(d, EngineEnv.ALLREDUCE)).isEqualTo("Custom");
        assertThat(env(d, EngineEnv.ALGORITHM_TABLE)).contains("Ring").contains("preflight");
        InferenceDeployment infd = client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("ok")
                .get();
        assertThat(infd.getStatus().allreduce.reason).contains("measured by the preflight");
        assertThat(events(client, ns, "ok"))
                .anyMatch(e -> "PreflightStarted".equals(e.getReason()))
                .anyMatch(e -> "PreflightPassed".equals(e.getReason()) && "Normal".equals(e.getType()));
    }

    @Test
    void failedSelftestRecordsTheFailureAndRollsOutWithNccl(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        String node = sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addRule(SimRule.forAllPods(
                        "preflight-p2p-broken",
                        SimAction.fail(
                                "{\"worldSize\":8,\"p2pVerified\":false,"
                                        + "\"selftestPassed\":false,\"failure\":\"P2P read-back wrong between GPU 2 and GPU 5\"}"))
                .inNamespace(ns.name())
                .withLabels(PREFLIGHT_PODS));
        create(client, ns, "broken");

        assertJobShape(awaitJob(client, ns, "broken"), node);
        Measurement m = awaitMeasurement(client, node);
        assertThat(m.failure).isEqualTo("P2P read-back wrong between GPU 2 and GPU 5");
        assertThat(m.p2pVerified).isFalse();

        Deployment d = awaitDeployment(client, ns, "broken");
        assertThat(env(d, EngineEnv.ALLREDUCE)).isEqualTo("NCCL");
        InferenceDeployment infd = client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("broken")
                .get();
        assertThat(infd.getStatus().allreduce.mode).isEqualTo(Allreduce.NCCL);
        assertThat(infd.getStatus().allreduce.reason).contains("preflight failed: P2P read-back wrong");
        assertThat(events(client, ns, "broken"))
                .anyMatch(e -> "PreflightFailed".equals(e.getReason())
                        && "Warning".equals(e.getType())
                        && e.getMessage().contains("NCCL is used"));
    }

    @Test
    void hangingPreflightEndsAtItsDeadlineAndRollsOutWithNccl(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        String node = sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addRule(SimRule.forAllPods("preflight-hangs", SimAction.hang())
                .inNamespace(ns.name())
                .withLabels(PREFLIGHT_PODS));
        long t0 = System.nanoTime();
        create(client, ns, "stuck");

        assertThat(awaitJob(client, ns, "stuck").getSpec().getActiveDeadlineSeconds())
                .isEqualTo(DEADLINE.toSeconds());
        Measurement m = awaitMeasurement(client, node);
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(m.failure)
                .matches(
                        f -> f.contains("timed out after 6 s") || f.contains("did not finish within"),
                        "a timeout failure");
        assertThat(took).as("never a hang: bounded by deadline + grace").isLessThan(DEADLINE.plusSeconds(4 + 20));

        Deployment d = awaitDeployment(client, ns, "stuck");
        assertThat(env(d, EngineEnv.ALLREDUCE)).isEqualTo("NCCL");
        assertThat(events(client, ns, "stuck")).anyMatch(e -> "PreflightFailed".equals(e.getReason()));
    }

    @Test
    void aSpecWhoseChildrenAreRejectedIsInvalidInsteadOfWaitingForAPreflight(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws InterruptedException {
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        InferenceDeployment infd = new InferenceDeployment();
        infd.getMetadata().setName("bad-toleration");
        infd.getMetadata().setNamespace(ns.name());
        infd.setSpec(Fixtures.llama70b(8));
        infd.getSpec().placement = new io.tensorlane.api.v1alpha1.PlacementSpec();
        infd.getSpec().placement.tolerations = List.of(new io.fabric8.kubernetes.api.model.TolerationBuilder()
                .withKey("gpu")
                .withOperator("Exists")
                .withValue("yes")
                .build());
        client.resource(infd).create();

        InferenceDeployment d = client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("bad-toleration")
                .informOnCondition(l -> l.size() == 1
                        && l.get(0).getStatus() != null
                        && io.tensorlane.operator.status.Conditions.isTrue(
                                l.get(0).getStatus().conditions, "InvalidSpec"))
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join()
                .get(0);
        var c = io.tensorlane.operator.status.Conditions.find(d.getStatus().conditions, "InvalidSpec")
                .orElseThrow();
        assertThat(c.getReason()).isEqualTo("DeploymentRejected");
        assertThat(c.getMessage()).contains("tolerations").contains("spec.placement.tolerations");
        assertThat(d.getStatus().phase).isEqualTo(io.tensorlane.api.v1alpha1.Phase.Invalid);
        Thread.sleep(2000); // the preflight reconciler had its chance
        // this deployment's Jobs only: the other tests of the class share the namespace and leave theirs
        assertThat(client.batch().v1().jobs().inNamespace(ns.name()).list().getItems().stream()
                        .filter(j -> "bad-toleration"
                                .equals(j.getMetadata().getLabels().get("app.kubernetes.io/instance"))))
                .as("no preflight Job for a spec the API server rejects")
                .isEmpty();
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    static void create(KubernetesClient client, TestNamespace ns, String name) {
        InferenceDeployment infd = new InferenceDeployment();
        infd.getMetadata().setName(name);
        infd.getMetadata().setNamespace(ns.name());
        infd.setSpec(Fixtures.llama70b(8));
        client.resource(infd).create();
    }

    static void assertJobShape(Job job, String node) {
        assertThat(job.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getKind()).isEqualTo("InferenceDeployment"));
        assertThat(job.getSpec().getBackoffLimit()).isZero();
        assertThat(job.getSpec().getActiveDeadlineSeconds()).isEqualTo(DEADLINE.toSeconds());
        var pod = job.getSpec().getTemplate().getSpec();
        assertThat(pod.getRestartPolicy()).isEqualTo("Never");
        assertThat(pod.getAffinity()
                        .getNodeAffinity()
                        .getRequiredDuringSchedulingIgnoredDuringExecution()
                        .getNodeSelectorTerms()
                        .get(0)
                        .getMatchFields()
                        .get(0)
                        .getValues())
                .containsExactly(node);
        var c = pod.getContainers().get(0);
        assertThat(c.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("8"));
        assertThat(c.getArgs()).startsWith("preflight", "--world-size", "8");
        assertThat(c.getImage()).isEqualTo("tensorlane/tensorlane-runtime:0.1.0");
    }

    static Job awaitJob(KubernetesClient client, TestNamespace ns, String deployment) {
        return client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withLabels(Map.of(
                        PreflightJobs.COMPONENT_LABEL, PreflightJobs.COMPONENT, Renderer.LABEL_INSTANCE, deployment))
                .informOnCondition(l -> l.size() == 1)
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join()
                .get(0);
    }

    static Pod awaitPreflightPod(KubernetesClient client, TestNamespace ns, String deployment, Predicate<Pod> p) {
        return client.pods()
                .inNamespace(ns.name())
                .withLabels(Map.of(
                        PreflightJobs.COMPONENT_LABEL, PreflightJobs.COMPONENT, Renderer.LABEL_INSTANCE, deployment))
                .informOnCondition(l -> l.size() == 1 && l.get(0).getStatus() != null && p.test(l.get(0)))
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join()
                .get(0);
    }

    /** What the kubelet reports when the preflight container exits: phase and termination message. */
    static void finishPod(KubernetesClient client, Pod pod, int exit, String message) {
        var at = new PodStatuses.Placement(
                pod.getStatus().getHostIP(),
                pod.getStatus().getPodIP(),
                Instant.parse(pod.getStatus().getStartTime()));
        Pod patch = new PodBuilder()
                .withNewMetadata()
                .withName(pod.getMetadata().getName())
                .withNamespace(pod.getMetadata().getNamespace())
                .withUid(pod.getMetadata().getUid())
                .endMetadata()
                .withStatus(PodStatuses.completed(pod, at, exit, message, Instant.now()))
                .build();
        client.pods().resource(patch).patchStatus();
    }

    static Measurement awaitMeasurement(KubernetesClient client, String node) {
        return client.resources(GpuTopology.class)
                .withName(node)
                .informOnCondition(l -> l.size() == 1
                        && l.get(0).getStatus() != null
                        && l.get(0).getStatus().measurement != null)
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join()
                .get(0)
                .getStatus()
                .measurement;
    }

    static Deployment deployment(KubernetesClient client, TestNamespace ns, String name) {
        return client.apps().deployments().inNamespace(ns.name()).withName(name).get();
    }

    static Deployment awaitDeployment(KubernetesClient client, TestNamespace ns, String name) {
        return client.apps()
                .deployments()
                .inNamespace(ns.name())
                .withName(name)
                .informOnCondition(l -> l.size() == 1)
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join()
                .get(0);
    }

    static String env(Deployment d, String name) {
        return d.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
                .filter(e -> name.equals(e.getName()))
                .map(e -> e.getValue())
                .findFirst()
                .orElse(null);
    }

    static List<Event> events(KubernetesClient client, TestNamespace ns, String name) {
        return client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()))
                .toList();
    }
}
