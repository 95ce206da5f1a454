package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.operator.OperatorSettings;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Writes of the children against the real API server: only what changed is written; the Service's background write
 * reports what is missing until it is in place, and its failures.
 */
@WithLocalCluster
class ChildApplierTest {
  @Test
  void writesOnceThenOnlyWhatChanged(KubernetesClient client, TestNamespace ns) {
    DecisionMetrics metrics = DecisionMetrics.inMemory();
    ChildApplier applier = new ChildApplier(client, OperatorSettings.FIELD_MANAGER, metrics);

    assertThat(applier.apply(deployment(ns, "a", "v1"), null)).isTrue();
    Deployment live = client.apps().deployments().inNamespace(ns.name()).withName("a").get();
    assertThat(ChildApplier.upToDate(deployment(ns, "a", "v1"), live)).isTrue();
    assertThat(applier.apply(deployment(ns, "a", "v1"), live)).as("unchanged: no write").isFalse();
    assertThat(applier.apply(deployment(ns, "a", "v2"), live)).isTrue();
    assertThat(client.apps().deployments().inNamespace(ns.name()).withName("a").get().getSpec().getTemplate()
        .getMetadata().getLabels()).containsEntry("v", "v2");
    assertThat(metrics.count("tensorlane.applies", "kind", "Deployment")).isEqualTo(2.0);
    assertThatThrownBy(() -> applier.apply(invalid(deployment(ns, "b", "v1")), null))
        .isInstanceOf(KubernetesClientException.class).hasMessageContaining("replicas");
  }

  @Test
  void theServiceIsWrittenInTheBackgroundAndReportedUntilItIsThere(KubernetesClient client, TestNamespace ns) {
    DecisionMetrics metrics = DecisionMetrics.inMemory();
    ChildApplier applier = new ChildApplier(client, OperatorSettings.FIELD_MANAGER, metrics);
    try (BackgroundApplies background = new BackgroundApplies(2)) {
      assertThat(background.problem(service(ns, "s", 8000), null)).hasValueSatisfying(p -> assertThat(p)
          .contains("Service " + ns.name() + "/s is being created"));
      assertThat(background.submit(applier, service(ns, "s", 8000), null)).isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> background.pending() == 0);
      Service live = client.services().inNamespace(ns.name()).withName("s").get();
      assertThat(live.getSpec().getClusterIP()).as("a ClusterIP was allocated").isNotBlank();
      assertThat(background.problem(service(ns, "s", 8000), live)).isEmpty();
      assertThat(background.submit(applier, service(ns, "s", 8000), live)).as("in place: nothing to write").isFalse();

      Service older = new ServiceBuilder(live).build();
      older.getMetadata().getAnnotations().put(ChildApplier.APPLIED_HASH, "older");
      assertThat(background.submit(applier, service(ns, "s", 8000), older))
          .as("just written; the informer has not caught up yet").isFalse();
      assertThat(background.submit(applier, service(ns, "s", 8000), null))
          .as("deleted by someone: written again").isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> background.pending() == 0);

      assertThat(background.submit(applier, service(ns, "s", 9000), live)).isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> background.pending() == 0);
      assertThat(client.services().inNamespace(ns.name()).withName("s").get().getSpec().getPorts().get(0).getPort())
          .isEqualTo(9000);
      assertThat(metrics.count("tensorlane.applies", "kind", "Service")).isEqualTo(3.0);
    }
  }

  @Test
  void aFailedBackgroundWriteIsReportedAndRetriedByTheNextSubmit(KubernetesClient client, TestNamespace ns) {
    ChildApplier applier = new ChildApplier(client, OperatorSettings.FIELD_MANAGER, DecisionMetrics.inMemory());
    try (BackgroundApplies background = new BackgroundApplies(1)) {
      assertThat(background.submit(applier, service(ns, "bad", 70000), null)).isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> background.pending() == 0);
      assertThat(background.problem(service(ns, "bad", 70000), null)).hasValueSatisfying(p -> assertThat(p)
          .contains("applying Service " + ns.name() + "/bad failed").contains("port"));
      assertThat(background.submit(applier, service(ns, "bad", 8000), null)).as("a later reconcile retries").isTrue();
      await().atMost(Duration.ofSeconds(30)).until(() -> background.pending() == 0);
      Service live = client.services().inNamespace(ns.name()).withName("bad").get();
      assertThat(background.problem(service(ns, "bad", 8000), live)).isEmpty();
    }
  }

  static Deployment invalid(Deployment d) {
    d.getSpec().setReplicas(-1); // the API server's validation rejects it
    return d;
  }

  static Deployment deployment(TestNamespace ns, String name, String version) {
    Map<String, String> labels = Map.of("app", name);
    return new DeploymentBuilder().withNewMetadata().withName(name).withNamespace(ns.name()).endMetadata()
        .withNewSpec().withReplicas(0).withNewSelector().withMatchLabels(labels).endSelector()
        .withNewTemplate().withNewMetadata().withLabels(Map.of("app", name, "v", version)).endMetadata()
        .withNewSpec().addNewContainer().withName("c").withImage("example/engine:1").endContainer().endSpec()
        .endTemplate().endSpec().build();
  }

  static Service service(TestNamespace ns, String name, int port) {
    return new ServiceBuilder().withNewMetadata().withName(name).withNamespace(ns.name()).endMetadata()
        .withNewSpec().withSelector(Map.of("app", name)).addNewPort().withName("http").withProtocol("TCP").withPort(port).endPort()
        .endSpec().build();
  }
}
