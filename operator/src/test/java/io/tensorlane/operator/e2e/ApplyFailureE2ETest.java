package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Item 1 of issue 17 on the real API server: an apply the server refuses for a reason that is not the spec's (here a
 * ResourceQuota that allows no Service: 403 Forbidden) reaches status through JOSDK's error-status hook as ApplyFailed,
 * naming the object, with a Warning event; nothing is written and status claims no revision; when the quota goes away
 * the retry (JOSDK's backoff) applies everything and the condition clears.
 */
@WithLocalCluster
class ApplyFailureE2ETest {
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
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
    void aRefusedServiceIsApplyFailedNamingItAndClearsOnceItIsApplied(KubernetesClient client, TestNamespace ns) {
        ResourceQuota quota = new ResourceQuotaBuilder()
                .withNewMetadata()
                .withName("no-services")
                .withNamespace(ns.name())
                .endMetadata()
                .withNewSpec()
                .addToHard("services", new Quantity("0"))
                .endSpec()
                .build();
        client.resource(quota).create();
        // admission trusts the quota once the controller-manager has recorded its usage
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> {
            var q = client.resourceQuotas()
                    .inNamespace(ns.name())
                    .withName("no-services")
                    .get();
            return q.getStatus() != null
                    && q.getStatus().getHard() != null
                    && q.getStatus().getHard().containsKey("services");
        });

        InferenceDeployment one = Samples.load(Samples.SMALL_2GPU, ns.name(), "quota");
        one.getSpec().replicas = 1;
        client.resource(one).create();
        InferenceDeployment d = Samples.await(
                client,
                ns.name(),
                "quota",
                Duration.ofSeconds(30),
                x -> x.getStatus() != null
                        && Conditions.isTrue(x.getStatus().conditions, StatusAggregator.APPLY_FAILED));
        var c = Conditions.find(d.getStatus().conditions, StatusAggregator.APPLY_FAILED)
                .orElseThrow();
        assertThat(c.getReason()).isEqualTo("ServiceApplyFailed");
        assertThat(c.getMessage())
                .startsWith("Service quota could not be applied (HTTP 403)")
                .contains("exceeded quota");
        assertThat(d.getStatus().phase).isNotEqualTo(Phase.Ready);
        assertThat(d.getStatus().revision).as("no revision was applied").isNull();
        assertThat(client.apps()
                        .deployments()
                        .inNamespace(ns.name())
                        .withName("quota")
                        .get())
                .as("both children pass the dry-run before either is written")
                .isNull();
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                        .anyMatch(e -> "ServiceApplyFailed".equals(e.getReason())
                                && "Warning".equals(e.getType())
                                && e.getMessage().contains("exceeded quota")));

        client.resource(quota).delete();
        InferenceDeployment ready = Samples.await(
                client,
                ns.name(),
                "quota",
                Duration.ofSeconds(60),
                Samples.phase(Phase.Ready)
                        .and(x -> !Conditions.isTrue(x.getStatus().conditions, StatusAggregator.APPLY_FAILED)));
        assertThat(Conditions.find(ready.getStatus().conditions, StatusAggregator.APPLY_FAILED)
                        .orElseThrow()
                        .getReason())
                .isEqualTo("Applied");
        assertThat(client.services().inNamespace(ns.name()).withName("quota").get())
                .isNotNull();
        assertThat(ready.getStatus().revision).isEqualTo(ready.getStatus().lastAppliedSpec.revision);
    }
}
