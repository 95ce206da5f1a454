package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologySpec;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.operator.plan.TopologyLabels;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.topology.GpuTopologyNodeLabeller;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.GfdHeuristic;
import io.tensorlane.topology.TopologyClassifier;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The node labeller on the real control plane: labels from a simulated probe GpuTopology, a heuristic GpuTopology and
 * labels from GFD labels alone, labels removed when the GpuTopology goes, a probe result never overwritten, and an old
 * probe result marked Stale.
 */
@WithLocalCluster
class NodeLabellingE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(30);
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns) {
        operator = OperatorHarness.start(
                client, ns.name(), OperatorHarness.testSettings("tensorlane.topology-max-age", "1d"));
    }

    @AfterAll
    static void stop(KubernetesClient client) {
        if (operator != null) {
            operator.close();
        }
        client.nodes().withLabel("tensorlane.io/test-node", "labelling").delete();
    }

    @Test
    void labelsFromASimulatedProbeTopology(KubernetesClient client, GpuNodeSimulator sim) {
        String node = sim.addNode(TopologyFixtures.H200_SXM_8);
        Map<String, String> labels =
                awaitLabels(client, node, l -> "NVLink".equals(l.get(TopologyLabels.INTERCONNECT)));
        assertThat(labels).containsEntry(TopologyLabels.P2P, "Full").containsEntry(TopologyLabels.GPU_COUNT, "8");
        assertThat(labels.get(TopologyLabels.GPU_PRODUCT)).contains("H200");
        // the probe result is never replaced by a heuristic, although the node carries GFD labels too
        GpuTopology t = client.resources(GpuTopology.class).withName(node).get();
        assertThat(t.getStatus().source).isEqualTo(GpuTopologyStatus.Source.probe);
    }

    @Test
    void heuristicTopologyAndLabelsFromGfdLabelsAlone(KubernetesClient client) {
        String name = gpuNode(
                client,
                Map.of(
                        GfdHeuristic.PRODUCT,
                        "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition",
                        GfdHeuristic.COUNT,
                        "8",
                        GfdHeuristic.MEMORY,
                        "97887"));
        GpuTopology t = Awaitility.await()
                .atMost(TIMEOUT)
                .ignoreExceptions()
                .until(
                        () -> client.resources(GpuTopology.class).withName(name).get(),
                        x -> x != null && x.getStatus() != null && x.getStatus().summary != null);
        assertThat(t.getStatus().source).isEqualTo(GpuTopologyStatus.Source.heuristic);
        assertThat(t.getStatus().summary.confidence).isEqualTo(TopologyClassifier.LOW);
        assertThat(t.getMetadata().getOwnerReferences()).anyMatch(o -> "Node".equals(o.getKind()));
        Map<String, String> labels = awaitLabels(client, name, l -> l.containsKey(TopologyLabels.INTERCONNECT));
        assertThat(labels)
                .containsEntry(TopologyLabels.INTERCONNECT, "PCIe")
                .containsEntry(TopologyLabels.P2P, "Full")
                .containsEntry(TopologyLabels.GPU_COUNT, "8");
    }

    @Test
    void deletingTheTopologyRemovesTheLabelsAndAnOldProbeResultIsStale(KubernetesClient client) {
        String name = gpuNode(client, Map.of()); // GPUs, but no GFD labels: nothing to derive a heuristic from
        GpuTopology t = new GpuTopology();
        t.getMetadata().setName(name);
        t.setSpec(new GpuTopologySpec());
        t.getSpec().nodeName = name;
        client.resource(t).create();
        GpuTopologyStatus status = TopologyFixtures.load(TopologyFixtures.L40S_2);
        status.source = GpuTopologyStatus.Source.probe;
        status.probeTime = Instant.now().minus(Duration.ofDays(3)).toString();
        GpuTopology withStatus =
                client.resources(GpuTopology.class).withName(name).get();
        withStatus.setStatus(status);
        client.resources(GpuTopology.class).resource(withStatus).patchStatus();

        awaitLabels(client, name, l -> "2".equals(l.get(TopologyLabels.GPU_COUNT)));
        GpuTopology stale = Awaitility.await()
                .atMost(TIMEOUT)
                .ignoreExceptions()
                .until(
                        () -> client.resources(GpuTopology.class).withName(name).get(),
                        x -> Conditions.isTrue(x.getStatus().conditions, GpuTopologyNodeLabeller.STALE));
        assertThat(Conditions.find(stale.getStatus().conditions, GpuTopologyNodeLabeller.STALE)
                        .orElseThrow()
                        .getMessage())
                .contains(status.probeTime);

        client.resources(GpuTopology.class).withName(name).delete();
        Map<String, String> after = awaitLabels(client, name, l -> !l.containsKey(TopologyLabels.GPU_COUNT));
        assertThat(after)
                .doesNotContainKeys(TopologyLabels.INTERCONNECT, TopologyLabels.P2P, TopologyLabels.GPU_PRODUCT);
    }

    /** A bare Node with 8 GPUs of capacity (no kubelet, no simulator): the labeller only reads labels and capacity. */
    static String gpuNode(KubernetesClient client, Map<String, String> gfd) {
        String name =
                "labelling-" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
        Node node = new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels(gfd)
                .addToLabels("tensorlane.io/test-node", "labelling")
                .endMetadata()
                .build();
        client.nodes().resource(node).create();
        Node status = new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withNewStatus()
                .addToCapacity("nvidia.com/gpu", new Quantity("8"))
                .addToAllocatable("nvidia.com/gpu", new Quantity("8"))
                .endStatus()
                .build();
        client.nodes().resource(status).patchStatus();
        return name;
    }

    static Map<String, String> awaitLabels(
            KubernetesClient client, String node, java.util.function.Predicate<Map<String, String>> condition) {
        return Awaitility.await()
                .atMost(TIMEOUT)
                .pollInterval(Duration.ofMillis(200))
                .ignoreExceptions()
                .until(() -> client.nodes().withName(node).get().getMetadata().getLabels(), condition::test);
    }
}
