package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.operator.plan.TopologyLabels;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * End to end on the real local control plane with simulated GPU nodes: the seed's sample on the PCIe fixture rolls
 * out, an unchanged spec causes no writes, a changed spec rolls the Deployment, bad specs get a clear condition or are
 * rejected by the schema while the operator keeps reconciling the others.
 */
@WithLocalCluster
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RolloutE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static OperatorHarness operator;
    static String pcieNode;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        pcieNode = sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addNode(TopologyFixtures.L40S_2);
        operator = OperatorHarness.start(client, ns.name());
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
    }

    @Test
    @Order(1)
    void seedSampleOnPcieFixtureRollsOutWithThePlanAndReportsIt(KubernetesClient client, TestNamespace ns) {
        client.resource(Samples.load(Samples.SEED_PCIE, ns.name(), "seed")).create();
        InferenceDeployment d = Samples.await(client, ns.name(), "seed", TIMEOUT, Samples.phase(Phase.Ready));

        var s = d.getStatus();
        assertThat(s.readyReplicas).isEqualTo(1);
        assertThat(s.replicas).isEqualTo(1);
        assertThat(s.topology.interconnect).isEqualTo("PCIe");
        assertThat(s.topology.nodes).contains(pcieNode);
        assertThat(s.allreduce.mode).isEqualTo(Allreduce.Custom);
        assertThat(s.allreduce.reason).isNotBlank();
        assertThat(s.memoryPlan.staticFraction).isBetween(0.5, 0.95);
        assertThat(s.memoryPlan.allreduceIpcBytes).isPositive();
        assertThat(s.lastAppliedSpec.revision).isEqualTo(s.revision);
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.READY)).isTrue();
        assertThat(s.conditions)
                .extracting(Condition::getObservedGeneration)
                .containsOnly(d.getMetadata().getGeneration());

        // `kubectl get infd` columns read these paths from the stored object
        Map<String, Object> raw = Serialization.unmarshal(Serialization.asJson(d), Map.class);
        @SuppressWarnings("unchecked")
        Map<String, Object> st = (Map<String, Object>) raw.get("status");
        assertThat(((Map<?, ?>) st.get("topology")).get("interconnect")).isEqualTo("PCIe");
        assertThat(((Map<?, ?>) st.get("allreduce")).get("mode")).isEqualTo("Custom");
        assertThat(((Map<?, ?>) st.get("memoryPlan")).get("staticFraction")).isInstanceOf(Number.class);
        assertThat(st.get("phase")).isEqualTo("Ready");
        assertThat(st.get("readyReplicas")).isEqualTo(1);

        Deployment dep = deployment(client, ns, d);
        var terms = dep.getSpec()
                .getTemplate()
                .getSpec()
                .getAffinity()
                .getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution()
                .getNodeSelectorTerms();
        Map<String, List<String>> affinity = terms.get(0).getMatchExpressions().stream()
                .collect(Collectors.toMap(NodeSelectorRequirement::getKey, NodeSelectorRequirement::getValues));
        assertThat(affinity.get(TopologyLabels.INTERCONNECT)).containsExactly("PCIe");
        // the node labeller mirrored the simulated GpuTopology onto the node, so the affinity matches it
        var node = client.nodes().withName(pcieNode).get();
        assertThat(node.getMetadata().getLabels())
                .containsEntry(TopologyLabels.INTERCONNECT, "PCIe")
                .containsEntry(TopologyLabels.GPU_COUNT, "8");
        var pods = client.pods().inNamespace(ns.name()).list().getItems();
        assertThat(pods).hasSize(1);
        assertThat(pods.get(0).getSpec().getNodeName()).isEqualTo(pcieNode);
        List<EnvVar> env =
                dep.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv();
        String envText = env.stream().map(e -> e.getName() + "=" + e.getValue()).collect(Collectors.joining(" "));
        assertThat(envText).contains("8").contains(String.valueOf(s.memoryPlan.staticFraction));

        // one event per decision: the rollout (revision, placement, plan, the model it pinned), then Ready
        RollbackE2ETest.awaitReasons(client, ns, "seed", "RolloutStarted", "Ready");
        assertThat(client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                        .filter(e -> "seed".equals(e.getInvolvedObject().getName())
                                && "InferenceDeployment"
                                        .equals(e.getInvolvedObject().getKind()))
                        .map(e -> e.getReason())
                        .toList())
                .as("the first rollout's events")
                .containsExactlyInAnyOrder("RolloutStarted", "Ready");
        String rollout = RollbackE2ETest.message(client, ns, "seed", "RolloutStarted");
        assertThat(rollout)
                .contains("revision " + s.revision)
                .contains("Deployment " + dep.getMetadata().getName())
                .contains(pcieNode)
                .contains("PCIe")
                .contains("allreduce Custom")
                .contains("static fraction " + s.memoryPlan.staticFraction)
                .contains("model " + s.model.source);
    }

    @Test
    @Order(2)
    void unchangedSpecCausesNoWrites(KubernetesClient client, TestNamespace ns) throws InterruptedException {
        Samples.await(client, ns.name(), "seed", TIMEOUT, d -> d.getStatus().lastStableSpec != null);
        Thread.sleep(1500); // let the stability write settle
        InferenceDeployment d = Samples.get(client, ns.name(), "seed");
        Deployment dep = deployment(client, ns, d);
        var svc = client.services()
                .inNamespace(ns.name())
                .withName(dep.getMetadata().getName())
                .get();
        double applies = operator.metrics().count("tensorlane.applies");
        // the informers deliver pod/deployment events in this period; touch the object without changing its spec too
        client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("seed")
                .edit(x -> {
                    x.getMetadata().setLabels(new java.util.HashMap<>(Map.of("touched", "yes")));
                    return x;
                });
        d = Samples.get(client, ns.name(), "seed");
        Thread.sleep(5000);
        assertThat(Samples.get(client, ns.name(), "seed").getMetadata().getResourceVersion())
                .as("no status write for an unchanged world")
                .isEqualTo(d.getMetadata().getResourceVersion());
        assertThat(deployment(client, ns, d).getMetadata().getResourceVersion())
                .isEqualTo(dep.getMetadata().getResourceVersion());
        assertThat(client.services()
                        .inNamespace(ns.name())
                        .withName(svc.getMetadata().getName())
                        .get()
                        .getMetadata()
                        .getResourceVersion())
                .isEqualTo(svc.getMetadata().getResourceVersion());
        assertThat(operator.metrics().count("tensorlane.applies")).isEqualTo(applies);
    }

    @Test
    @Order(3)
    void changingTheSpecRollsTheDeployment(KubernetesClient client, TestNamespace ns) {
        InferenceDeployment before = Samples.get(client, ns.name(), "seed");
        String oldRevision = before.getStatus().revision;
        client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("seed")
                .edit(x -> {
                    x.getSpec().serving.maxBatchTokens = 4096;
                    return x;
                });
        InferenceDeployment d = Samples.await(
                client,
                ns.name(),
                "seed",
                TIMEOUT,
                Samples.phase(Phase.Ready).and(x -> !oldRevision.equals(x.getStatus().revision)));
        Deployment dep = deployment(client, ns, d);
        assertThat(dep.getSpec().getTemplate().getMetadata().getLabels())
                .containsEntry(Renderer.LABEL_REVISION, d.getStatus().revision);
        assertThat(d.getStatus().lastAppliedSpec.spec.serving.maxBatchTokens).isEqualTo(4096);
        assertThat(d.getStatus().lastAppliedSpec.generation)
                .isEqualTo(d.getMetadata().getGeneration());
    }

    @Test
    @Order(4)
    void badSpecsGetAClearConditionAndTheOperatorKeepsGoing(KubernetesClient client, TestNamespace ns) {
        // schema: unknown engine, fraction 1.5, TP 0 are rejected at apply time
        for (String bad : List.of(
                "{\"engine\":{\"type\":\"Foo\"}}",
                "{\"memory\":{\"fraction\":\"1.5\"}}",
                "{\"parallelism\":{\"tensor\":0}}")) {
            InferenceDeployment d = Samples.load(Samples.SMALL_2GPU, ns.name(), "schema-bad");
            var json = Serialization.unmarshal(Serialization.asJson(d), Map.class);
            @SuppressWarnings("unchecked")
            Map<String, Object> spec = (Map<String, Object>) json.get("spec");
            spec.putAll(Serialization.unmarshal(bad, Map.class));
            assertThatThrownBy(() -> client.resource(Serialization.asJson(json))
                            .inNamespace(ns.name())
                            .create())
                    .as(bad)
                    .isInstanceOf(KubernetesClientException.class)
                    .hasMessageContaining("is invalid");
        }
        // NVLink required, none present → Unschedulable with a message naming the nodes
        InferenceDeployment nvlink = Samples.load(Samples.SMALL_2GPU, ns.name(), "wants-nvlink");
        nvlink.getSpec().placement.interconnect =
                io.tensorlane.api.v1alpha1.PlacementSpec.InterconnectRequirement.NVLink;
        client.resource(nvlink).create();
        // more GPUs than any free node: the seed already holds all 8 GPUs of the only 8-GPU node
        InferenceDeployment tooBig = Samples.load(Samples.SEED_PCIE, ns.name(), "too-big");
        client.resource(tooBig).create();
        // a good one next to them still rolls out
        InferenceDeployment good = Samples.load(Samples.SMALL_2GPU, ns.name(), "small");
        good.getSpec().replicas = 1;
        client.resource(good).create();

        InferenceDeployment n =
                Samples.await(client, ns.name(), "wants-nvlink", TIMEOUT, Samples.phase(Phase.Unschedulable));
        Condition c = Conditions.find(n.getStatus().conditions, StatusAggregator.UNSCHEDULABLE)
                .orElseThrow();
        assertThat(c.getStatus()).isEqualTo("True");
        assertThat(c.getMessage()).containsIgnoringCase("nvlink");
        assertThat(client.apps().deployments().inNamespace(ns.name()).list().getItems())
                .noneMatch(x -> x.getMetadata().getName().startsWith("wants-nvlink"));
        InferenceDeployment t =
                Samples.await(client, ns.name(), "too-big", TIMEOUT, Samples.phase(Phase.Unschedulable));
        assertThat(Conditions.find(t.getStatus().conditions, StatusAggregator.UNSCHEDULABLE)
                        .orElseThrow()
                        .getMessage())
                .contains(pcieNode);
        Samples.await(client, ns.name(), "small", TIMEOUT, Samples.phase(Phase.Ready));
    }

    @Test
    @Order(5)
    void aNewNodeRetriggersTheDeploymentThatWaitedForIt(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        // wants-nvlink (test 4) is Unschedulable; an NVLink node appears: its Node/GpuTopology events re-trigger it
        String h200 = sim.addNode(TopologyFixtures.H200_SXM_8);
        InferenceDeployment d = Samples.await(client, ns.name(), "wants-nvlink", TIMEOUT, Samples.phase(Phase.Ready));
        assertThat(d.getStatus().topology.interconnect).isEqualTo("NVLink");
        assertThat(d.getStatus().topology.nodes).containsExactly(h200);
        assertThat(Conditions.isTrue(d.getStatus().conditions, StatusAggregator.UNSCHEDULABLE))
                .isFalse();
    }

    static Deployment deployment(KubernetesClient client, TestNamespace ns, InferenceDeployment d) {
        return client.apps().deployments().inNamespace(ns.name()).list().getItems().stream()
                .filter(x -> x.getMetadata().getOwnerReferences().stream()
                        .anyMatch(o -> o.getUid().equals(d.getMetadata().getUid())))
                .findFirst()
                .orElseThrow();
    }
}
