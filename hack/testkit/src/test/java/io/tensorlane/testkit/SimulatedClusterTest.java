package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Deployments → ReplicaSets → Pods bound by the real scheduler to simulated GPU nodes, played by the simulator. */
@WithLocalCluster
class SimulatedClusterTest {
    private static final long WAIT_S = 60;

    /**
     * Each test sees only its own workloads and nodes: scheduling assertions depend on which GPUs are free, and a
     * Deployment left in the class's namespace would re-create its pods on the next test's nodes.
     */
    @AfterEach
    void cleanUp(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
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

    private static List<Pod> pods(KubernetesClient c, TestNamespace ns, String app) {
        return c.pods().inNamespace(ns.name()).withLabel("app", app).list().getItems();
    }

    private static boolean ready(Pod p) {
        return p.getStatus() != null
                && p.getStatus().getConditions() != null
                && p.getStatus().getConditions().stream()
                        .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    private static List<Pod> awaitPods(KubernetesClient c, TestNamespace ns, String app, int n, Predicate<Pod> each) {
        return c.pods()
                .inNamespace(ns.name())
                .withLabel("app", app)
                .informOnCondition(l -> l.size() == n && l.stream().allMatch(each))
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();
    }

    @Test
    void simulatedNodeIsReadyUntaintedWithGpusLabelsAndTopology(KubernetesClient client, GpuNodeSimulator sim) {
        String name = sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        Node node = client.nodes().withName(name).get();
        assertThat(node.getStatus().getAllocatable().get("nvidia.com/gpu")).isEqualTo(new Quantity("8"));
        assertThat(node.getMetadata().getLabels())
                .containsEntry("nvidia.com/gpu.count", "8")
                .containsEntry("nvidia.com/gpu.product", "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition")
                .containsKey("nvidia.com/gpu.memory");
        assertThat(node.getSpec().getTaints()).noneMatch(t -> t.getKey().startsWith("node.kubernetes.io/"));
        assertThat(node.getStatus().getConditions())
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));

        GpuTopology topo = client.resources(GpuTopology.class).withName(name).get();
        assertThat(topo.getSpec().nodeName).isEqualTo(name);
        assertThat(topo.getStatus().source).isEqualTo(GpuTopologyStatus.Source.probe);
        assertThat(topo.getStatus().gpus).hasSize(8);
        assertThat(topo.getStatus().summary.interconnect).isEqualTo(TopologySummary.Interconnect.PCIe);
        assertThat(topo.getStatus().summary.p2p).isEqualTo(TopologySummary.P2p.Full);
    }

    @Test
    void deploymentYieldsReplicaSetAndPodsScheduledOnFreeGpusAndRunningReady(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        String small = sim.addNode(TopologyFixtures.L40S_2);
        String big = sim.addNode(TopologyFixtures.H200_SXM_8);
        // 3 pods x 4 GPUs: two fit on the 8-GPU node, none on the 2-GPU node, the third stays Pending (no free GPUs)
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("web", 3, 4, "--mem-fraction-static", "0.85"))
                .create();

        List<ReplicaSet> rs = client.apps()
                .replicaSets()
                .inNamespace(ns.name())
                .withLabel("app", "web")
                .informOnCondition(l -> !l.isEmpty())
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();
        assertThat(rs.get(0).getMetadata().getOwnerReferences()).anyMatch(o -> "Deployment".equals(o.getKind()));

        client.pods()
                .inNamespace(ns.name())
                .withLabel("app", "web")
                .informOnCondition(l -> l.size() == 3
                        && l.stream().filter(SimulatedClusterTest::ready).count() == 2)
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();
        List<Pod> all = pods(client, ns, "web");
        List<Pod> running = all.stream().filter(SimulatedClusterTest::ready).toList();
        assertThat(running).extracting(p -> p.getSpec().getNodeName()).containsOnly(big);
        assertThat(running).allSatisfy(p -> {
            assertThat(p.getStatus().getPhase()).isEqualTo("Running");
            assertThat(p.getStatus().getPodIP()).isNotBlank();
            assertThat(p.getStatus().getContainerStatuses())
                    .allMatch(cs -> cs.getReady() && cs.getState().getRunning() != null);
        });
        Pod pending = all.stream().filter(p -> !ready(p)).findFirst().orElseThrow();
        assertThat(pending.getSpec().getNodeName()).isNull();
        assertThat(pending.getStatus().getConditions())
                .anyMatch(c -> "PodScheduled".equals(c.getType())
                        && "Unschedulable".equals(c.getReason())
                        && c.getMessage().contains("nvidia.com/gpu"));
        assertThat(all).extracting(p -> p.getSpec().getNodeName()).doesNotContain(small);
    }

    @Test
    void ruleTurnsHighMemoryFractionIntoCudaOomThenCrashLoop(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addRule(SimRule.forAllPods("seed-oom", SimAction.cudaOom("ipc-buffers", 25_165_824L, 4_194_304L))
                .inNamespace(ns.name())
                .withMemoryFractionAtLeast(0.93));
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("seed", 1, 8, "--mem-fraction-static=0.95"))
                .create();

        Pod p = awaitPods(
                        client,
                        ns,
                        "seed",
                        1,
                        pod -> lastTermination(pod) != null && "CrashLoopBackOff".equals(waitingReason(pod)))
                .get(0);
        ContainerStatus cs = p.getStatus().getContainerStatuses().get(0);
        assertThat(cs.getRestartCount()).isEqualTo(1);
        assertThat(cs.getReady()).isFalse();
        var term = cs.getLastState().getTerminated();
        assertThat(term.getExitCode()).isEqualTo(1);
        assertThat(term.getReason()).isEqualTo("Error");
        JsonNode msg = new ObjectMapper().readTree(term.getMessage());
        assertThat(msg.get("reason").asText()).isEqualTo("CudaOutOfMemory");
        assertThat(msg.get("phase").asText()).isEqualTo("ipc-buffers");
        assertThat(msg.get("requestedBytes").asLong()).isEqualTo(25_165_824L);
        assertThat(msg.get("freeBytes").asLong()).isEqualTo(4_194_304L);
        assertThat(ready(p)).isFalse();
    }

    @Test
    void ruleOomKillsByLabelWhileOthersRun(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.H200_SXM_8);
        sim.addRule(SimRule.forAllPods("host-oom", SimAction.oomKilled()).withLabels(Map.of("app", "hog")));
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("hog", 1, 2))
                .create();
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("fine", 1, 2))
                .create();

        // first the kubelet reports the kill itself, then the back-off
        Pod hog = awaitPods(client, ns, "hog", 1, pod -> {
                    var st = pod.getStatus().getContainerStatuses();
                    return st != null && !st.isEmpty() && st.get(0).getState().getTerminated() != null;
                })
                .get(0);
        var killed = hog.getStatus().getContainerStatuses().get(0).getState().getTerminated();
        assertThat(killed.getReason()).isEqualTo("OOMKilled");
        assertThat(killed.getExitCode()).isEqualTo(137);
        Pod looping = awaitPods(client, ns, "hog", 1, pod -> "CrashLoopBackOff".equals(waitingReason(pod)))
                .get(0);
        assertThat(lastTermination(looping).getReason()).isEqualTo("OOMKilled");
        awaitPods(client, ns, "fine", 1, SimulatedClusterTest::ready);
    }

    @Test
    void jobPodSucceedsByDefaultAndFailsOnRule(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addRule(SimRule.forAllPods("preflight-fails", SimAction.fail("p2p check failed"))
                .withLabels(Map.of("job", "bad")));
        for (String name : List.of("good", "bad")) {
            client.batch()
                    .v1()
                    .jobs()
                    .inNamespace(ns.name())
                    .resource(new JobBuilder()
                            .withNewMetadata()
                            .withName("preflight-" + name)
                            .endMetadata()
                            .withNewSpec()
                            .withBackoffLimit(0)
                            .withNewTemplate()
                            .withNewMetadata()
                            .addToLabels("job", name)
                            .endMetadata()
                            .withNewSpec()
                            .withRestartPolicy("Never")
                            .addNewContainer()
                            .withName("preflight")
                            .withImage("tensorlane/runtime:test")
                            .withNewResources()
                            .addToLimits("nvidia.com/gpu", new Quantity("1"))
                            .endResources()
                            .endContainer()
                            .endSpec()
                            .endTemplate()
                            .endSpec()
                            .build())
                    .create();
        }
        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withName("preflight-good")
                .waitUntilCondition(
                        j -> j != null
                                && j.getStatus() != null
                                && j.getStatus().getSucceeded() != null
                                && j.getStatus().getSucceeded() == 1,
                        WAIT_S,
                        TimeUnit.SECONDS);
        var bad = client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withName("preflight-bad")
                .waitUntilCondition(
                        j -> j != null
                                && j.getStatus() != null
                                && j.getStatus().getFailed() != null
                                && j.getStatus().getFailed() >= 1,
                        WAIT_S,
                        TimeUnit.SECONDS);
        assertThat(bad.getStatus().getSucceeded()).isNull();
        Pod badPod = client.pods()
                .inNamespace(ns.name())
                .withLabel("job", "bad")
                .list()
                .getItems()
                .get(0);
        assertThat(badPod.getStatus().getPhase()).isEqualTo("Failed");
        assertThat(badPod.getStatus()
                        .getContainerStatuses()
                        .get(0)
                        .getState()
                        .getTerminated()
                        .getMessage())
                .isEqualTo("p2p check failed");
    }

    @Test
    void hangingPodIsNeverReadyUntilTheTestFinishesItOnDemand(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addRule(SimRule.forAllPods("preflight-hangs", SimAction.hang()).inNamespace(ns.name()));
        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .resource(new JobBuilder()
                        .withNewMetadata()
                        .withName("preflight")
                        .endMetadata()
                        .withNewSpec()
                        .withBackoffLimit(0)
                        .withNewTemplate()
                        .withNewMetadata()
                        .addToLabels("app", "preflight")
                        .endMetadata()
                        .withNewSpec()
                        .withRestartPolicy("Never")
                        .addNewContainer()
                        .withName("preflight")
                        .withImage("tensorlane/runtime:test")
                        .endContainer()
                        .endSpec()
                        .endTemplate()
                        .endSpec()
                        .build())
                .create();
        Pod hanging = awaitPods(
                        client,
                        ns,
                        "preflight",
                        1,
                        p -> "Running".equals(p.getStatus().getPhase()))
                .get(0);
        assertThat(ready(hanging)).isFalse();
        assertThat(hanging.getStatus().getContainerStatuses().get(0).getState().getRunning())
                .isNotNull();

        sim.act(hanging, SimAction.succeed("{\"p2pVerified\":true}"));
        var job = client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withName("preflight")
                .waitUntilCondition(
                        j -> j != null
                                && j.getStatus() != null
                                && j.getStatus().getSucceeded() != null
                                && j.getStatus().getSucceeded() == 1,
                        WAIT_S,
                        TimeUnit.SECONDS);
        assertThat(job.getStatus().getSucceeded()).isEqualTo(1);
        Pod done = client.pods()
                .inNamespace(ns.name())
                .withName(hanging.getMetadata().getName())
                .get();
        assertThat(done.getStatus().getPhase()).isEqualTo("Succeeded");
        assertThat(done.getStatus()
                        .getContainerStatuses()
                        .get(0)
                        .getState()
                        .getTerminated()
                        .getMessage())
                .isEqualTo("{\"p2pVerified\":true}");
    }

    /**
     * A preflight-like Job holds every GPU of the node; a server pod waits for them. When the Job's pod finishes, the
     * server is scheduled without the 1.20 scheduler's one-minute retry (the simulator nudges it).
     */
    @Test
    void gpusFreedByAFinishedJobPodAreReusedPromptly(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        String node = sim.addNode(TopologyFixtures.L40S_2);
        sim.addRule(SimRule.forAllPods("job-holds-gpus", SimAction.hang())
                .inNamespace(ns.name())
                .withLabels(Map.of("app", "holder")));
        client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .resource(new JobBuilder()
                        .withNewMetadata()
                        .withName("holder")
                        .endMetadata()
                        .withNewSpec()
                        .withBackoffLimit(0)
                        .withNewTemplate()
                        .withNewMetadata()
                        .addToLabels("app", "holder")
                        .endMetadata()
                        .withNewSpec()
                        .withRestartPolicy("Never")
                        .addNewContainer()
                        .withName("preflight")
                        .withImage("tensorlane/runtime:test")
                        .withNewResources()
                        .addToLimits("nvidia.com/gpu", new Quantity("2"))
                        .endResources()
                        .endContainer()
                        .endSpec()
                        .endTemplate()
                        .endSpec()
                        .build())
                .create();
        Pod holder = awaitPods(
                        client,
                        ns,
                        "holder",
                        1,
                        p -> "Running".equals(p.getStatus().getPhase()))
                .get(0);
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("server", 1, 2))
                .create();
        client.pods()
                .inNamespace(ns.name())
                .withLabel("app", "server")
                .informOnCondition(l -> l.size() == 1
                        && l.get(0).getStatus().getConditions().stream()
                                .anyMatch(c -> "Unschedulable".equals(c.getReason())))
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();

        sim.act(holder, SimAction.succeed());
        Pod server = client.pods()
                .inNamespace(ns.name())
                .withLabel("app", "server")
                .informOnCondition(l -> l.size() == 1 && ready(l.get(0)))
                .orTimeout(30, TimeUnit.SECONDS)
                .join()
                .get(0);
        assertThat(server.getSpec().getNodeName()).isEqualTo(node);
    }

    @Test
    void deletingTheDeploymentRemovesItsPodsThroughGarbageCollection(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.RTX_4090_4);
        client.apps()
                .deployments()
                .inNamespace(ns.name())
                .resource(gpuDeployment("gone", 2, 1))
                .create();
        awaitPods(client, ns, "gone", 2, SimulatedClusterTest::ready);
        client.apps().deployments().inNamespace(ns.name()).withName("gone").delete();
        // GC deletes the ReplicaSet, the ReplicaSet's pods get a deletionTimestamp, the simulator finalizes them
        client.pods()
                .inNamespace(ns.name())
                .withLabel("app", "gone")
                .informOnCondition(List::isEmpty)
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();
        assertThat(client.apps()
                        .replicaSets()
                        .inNamespace(ns.name())
                        .withLabel("app", "gone")
                        .list()
                        .getItems())
                .isEmpty();
    }

    private static String waitingReason(Pod p) {
        var st = p.getStatus().getContainerStatuses();
        return st == null || st.isEmpty() || st.get(0).getState().getWaiting() == null
                ? null
                : st.get(0).getState().getWaiting().getReason();
    }

    private static io.fabric8.kubernetes.api.model.ContainerStateTerminated lastTermination(Pod p) {
        var st = p.getStatus().getContainerStatuses();
        return st == null || st.isEmpty() || st.get(0).getLastState() == null
                ? null
                : st.get(0).getLastState().getTerminated();
    }
}
