package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.render.ChildNames;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Issue 17's acceptance list on the real local control plane: every {@link Mistakes} entry, as a new object and as an
 * update of a Ready deployment, ends rejected by the schema or with a condition naming the problem within 30 s; an
 * update never touches the running Deployment (its template and its Ready replica stay) and fixing the spec resumes
 * the rollout; names that are valid for the custom resource but not for a Service get valid children.
 */
@WithLocalCluster
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MistakesE2ETest {
    static final Duration WITHIN = Duration.ofSeconds(30);
    static final String RUNNING = "running";
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addNode(TopologyFixtures.L40S_2);
        operator = OperatorHarness.start(client, ns.name());
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
    }

    /**
     * The 2-GPU sample with Llama-3.1-8B's geometry and weight bytes written in the spec (the override path: no model is
     * read), so that the geometry mistakes below are mistakes in what the user wrote.
     */
    static InferenceDeployment base(String ns, String name) {
        InferenceDeployment d = Samples.load(Samples.SMALL_2GPU, ns, name);
        d.getSpec().replicas = 1;
        ModelSpec llama8b = Fixtures.llama8b(2).model;
        d.getSpec().model.geometry = llama8b.geometry;
        d.getSpec().model.weightBytes = llama8b.weightBytes;
        return d;
    }

    @SuppressWarnings("unchecked")
    static String withPatch(InferenceDeployment d, String specPatch) {
        Map<String, Object> json = Serialization.unmarshal(Serialization.asJson(d), Map.class);
        json.put(
                "spec",
                Mistakes.merge((Map<String, Object>) json.get("spec"), Serialization.unmarshal(specPatch, Map.class)));
        return Serialization.asJson(json);
    }

    /** The mistake's condition, True and naming the problem, on the current generation; never Ready or Progressing. */
    static Predicate<InferenceDeployment> endsWith(Mistakes m) {
        return d -> {
            var s = d.getStatus();
            if (s == null || !d.getMetadata().getGeneration().equals(s.observedGeneration)) {
                return false;
            }
            Optional<Condition> c =
                    Conditions.find(s.conditions, m.condition()).filter(x -> Conditions.TRUE.equals(x.getStatus()));
            return c.isPresent() && c.get().getMessage().contains(m.names());
        };
    }

    static void assertNeverReadyNorProgressing(InferenceDeployment d, Mistakes m) {
        assertThat(d.getStatus().phase).as(m.name()).isNotIn(Phase.Ready, Phase.Progressing, Phase.Pending);
        assertThat(Conditions.isTrue(d.getStatus().conditions, StatusAggregator.READY))
                .as(m.name())
                .isFalse();
        assertThat(Conditions.isTrue(d.getStatus().conditions, StatusAggregator.PROGRESSING))
                .as(m.name())
                .isFalse();
    }

    @Test
    @Order(1)
    void everyMistakeAsANewObjectIsRejectedOrNamedInACondition(KubernetesClient client, TestNamespace ns) {
        List<String> created = new ArrayList<>();
        for (int i = 0; i < Mistakes.ALL.size(); i++) {
            Mistakes m = Mistakes.ALL.get(i);
            String json = withPatch(base(ns.name(), "new-" + i), m.patch());
            if (m.condition() == null) {
                assertThatThrownBy(() ->
                                client.resource(json).inNamespace(ns.name()).create())
                        .as(m.name())
                        .isInstanceOf(KubernetesClientException.class)
                        .hasMessageContaining("is invalid")
                        .hasMessageContaining(m.names());
            } else {
                client.resource(json).inNamespace(ns.name()).create();
                created.add("new-" + i);
            }
        }
        // the operator keeps serving the others: a good deployment created behind all those mistakes rolls out
        client.resource(base(ns.name(), "bystander")).create();
        for (int i = 0; i < Mistakes.ALL.size(); i++) {
            Mistakes m = Mistakes.ALL.get(i);
            if (m.condition() != null) {
                InferenceDeployment d = Samples.await(client, ns.name(), "new-" + i, WITHIN, endsWith(m));
                assertNeverReadyNorProgressing(d, m);
                assertThat(d.getStatus().lastAppliedSpec).as(m.name()).isNull();
            }
        }
        Samples.await(client, ns.name(), "bystander", WITHIN, Samples.phase(Phase.Ready));
        client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("bystander")
                .delete();
        assertThat(client.apps().deployments().inNamespace(ns.name()).list().getItems())
                .noneMatch(x -> x.getMetadata().getName().startsWith("new-"));
        assertThat(client.services().inNamespace(ns.name()).list().getItems())
                .noneMatch(x -> x.getMetadata().getName().startsWith("new-"));
        created.forEach(n -> client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName(n)
                .delete());
    }

    @Test
    @Order(2)
    void everyMistakeAsAnUpdateKeepsTheRunningRevisionAndFixingItResumes(KubernetesClient client, TestNamespace ns) {
        InferenceDeployment good = base(ns.name(), RUNNING);
        client.resource(good).create();
        InferenceDeployment ready =
                Samples.await(client, ns.name(), RUNNING, Duration.ofSeconds(60), Samples.phase(Phase.Ready));
        String revision = ready.getStatus().revision;
        Deployment before = RolloutE2ETest.deployment(client, ns, ready);
        String template = Serialization.asJson(before.getSpec().getTemplate());
        String goodSpec = Serialization.asJson(ready.getSpec());

        for (Mistakes m : Mistakes.ALL) {
            String patch = "{\"spec\":" + m.patch() + "}";
            var resource = client.resources(InferenceDeployment.class)
                    .inNamespace(ns.name())
                    .withName(RUNNING);
            if (m.condition() == null) {
                assertThatThrownBy(() -> resource.patch(PatchContext.of(PatchType.JSON_MERGE), patch))
                        .as(m.name())
                        .isInstanceOf(KubernetesClientException.class)
                        .hasMessageContaining(m.names());
                continue;
            }
            resource.patch(PatchContext.of(PatchType.JSON_MERGE), patch);
            InferenceDeployment d = Samples.await(client, ns.name(), RUNNING, WITHIN, endsWith(m));
            assertNeverReadyNorProgressing(d, m);
            assertThat(d.getStatus().revision)
                    .as(m.name() + ": status keeps the running revision")
                    .isEqualTo(revision);
            Deployment now = RolloutE2ETest.deployment(client, ns, d);
            assertThat(Serialization.asJson(now.getSpec().getTemplate()))
                    .as(m.name() + ": template untouched")
                    .isEqualTo(template);
            assertThat(now.getStatus().getReadyReplicas())
                    .as(m.name() + ": the Ready replica stays")
                    .isEqualTo(1);

            // the fix: back to the good spec, the condition clears and the deployment is Ready on its revision again
            resource.edit(x -> {
                x.setSpec(Serialization.unmarshal(goodSpec, io.tensorlane.api.v1alpha1.InferenceDeploymentSpec.class));
                return x;
            });
            InferenceDeployment fixed = Samples.await(client, ns.name(), RUNNING, WITHIN, Samples.phase(Phase.Ready));
            assertThat(fixed.getStatus().revision).isEqualTo(revision);
            assertThat(Conditions.isTrue(fixed.getStatus().conditions, m.condition()))
                    .as(m.name())
                    .isFalse();
        }
        // a good change after all of that still rolls out
        client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName(RUNNING)
                .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"serving\":{\"maxBatchTokens\":4096}}}");
        InferenceDeployment rolled = Samples.await(
                client,
                ns.name(),
                RUNNING,
                Duration.ofSeconds(60),
                Samples.phase(Phase.Ready).and(x -> !revision.equals(x.getStatus().revision)));
        assertThat(RolloutE2ETest.deployment(client, ns, rolled)
                        .getSpec()
                        .getTemplate()
                        .getMetadata()
                        .getLabels())
                .containsEntry(Renderer.LABEL_REVISION, rolled.getStatus().revision);
    }

    @Test
    @Order(3)
    void namesThatAreNoServiceNamesGetValidChildren(KubernetesClient client, TestNamespace ns) {
        client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName(RUNNING)
                .delete();
        List<String> names = List.of("llama.3.1-8b", "8b-llama", "l".repeat(70));
        for (String n : names) {
            client.resource(base(ns.name(), n)).create();
        }
        for (String n : names) {
            InferenceDeployment d =
                    Samples.await(client, ns.name(), n, Duration.ofSeconds(60), Samples.phase(Phase.Ready));
            String child = ChildNames.of(n);
            assertThat(child).isNotEqualTo(n);
            Deployment dep = RolloutE2ETest.deployment(client, ns, d);
            assertThat(dep.getMetadata().getName()).isEqualTo(child);
            var svc = client.services().inNamespace(ns.name()).withName(child).get();
            assertThat(svc).as("the Service of " + n).isNotNull();
            assertThat(svc.getSpec().getSelector()).containsEntry(Renderer.LABEL_INSTANCE, child);
            assertThat(svc.getMetadata().getOwnerReferences())
                    .anyMatch(o -> o.getUid().equals(d.getMetadata().getUid()));
        }
    }
}
