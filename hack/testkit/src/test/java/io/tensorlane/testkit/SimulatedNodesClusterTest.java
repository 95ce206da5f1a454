package io.tensorlane.testkit;

import static io.tensorlane.testkit.SimulatedWorkloads.WAIT_S;
import static io.tensorlane.testkit.SimulatedWorkloads.awaitPods;
import static io.tensorlane.testkit.SimulatedWorkloads.gpuDeployment;
import static io.tensorlane.testkit.SimulatedWorkloads.pods;
import static io.tensorlane.testkit.SimulatedWorkloads.ready;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Simulated GPU nodes and scheduling on them: labels, topology, binding, GPUs a Job pod frees, garbage collection. */
@WithLocalCluster
class SimulatedNodesClusterTest {
    /** Each test sees only its own workloads and nodes (see {@link SimulatedWorkloads#cleanUp}). */
    @AfterEach
    void cleanUp(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        SimulatedWorkloads.cleanUp(client, ns, sim);
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
                        && l.stream().filter(SimulatedWorkloads::ready).count() == 2)
                .orTimeout(WAIT_S, TimeUnit.SECONDS)
                .join();
        List<Pod> all = pods(client, ns, "web");
        List<Pod> running = all.stream().filter(SimulatedWorkloads::ready).toList();
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
        awaitPods(client, ns, "gone", 2, SimulatedWorkloads::ready);
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
}
