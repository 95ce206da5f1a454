package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.support.DecisionMetrics;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Writes of the children against the real API server: only what changed is written; a rejected write throws. */
@WithLocalCluster
class ChildApplierClusterTest {
    @Test
    void eachWriteIsReportedWithTheStoredObjectAndTheChildItReplaced(KubernetesClient client, TestNamespace ns) {
        java.util.List<String> seen = new java.util.ArrayList<>();
        ChildApplier applier = new ChildApplier(
                client,
                TensorlaneConfig.FIELD_MANAGER,
                DecisionMetrics.inMemory(),
                (applied, live) -> seen.add(applied.getKind() + " "
                        + applied.getMetadata().getName()
                        + " stored="
                        + !applied.getMetadata().getResourceVersion().isBlank()
                        + " hash=" + applied.getMetadata().getAnnotations().get(ChildApplier.APPLIED_HASH)
                        + " replaced="
                        + (live == null ? "none" : live.getMetadata().getResourceVersion())));

        applier.apply(deployment(ns, "r", "v1"), null);
        Deployment live =
                client.apps().deployments().inNamespace(ns.name()).withName("r").get();
        applier.apply(deployment(ns, "r", "v1"), live); // unchanged: no write, nothing reported
        applier.apply(deployment(ns, "r", "v2"), live);

        assertThat(seen)
                .containsExactly(
                        "Deployment r stored=true hash=" + ChildApplier.hash(deployment(ns, "r", "v1"))
                                + " replaced=none",
                        "Deployment r stored=true hash=" + ChildApplier.hash(deployment(ns, "r", "v2")) + " replaced="
                                + live.getMetadata().getResourceVersion());
    }

    @Test
    void writesOnceThenOnlyWhatChanged(KubernetesClient client, TestNamespace ns) {
        DecisionMetrics metrics = DecisionMetrics.inMemory();
        ChildApplier applier = new ChildApplier(client, TensorlaneConfig.FIELD_MANAGER, metrics, (applied, live) -> {});

        assertThat(applier.apply(deployment(ns, "a", "v1"), null)).isTrue();
        Deployment live =
                client.apps().deployments().inNamespace(ns.name()).withName("a").get();
        assertThat(ChildApplier.upToDate(deployment(ns, "a", "v1"), live)).isTrue();
        assertThat(applier.apply(deployment(ns, "a", "v1"), live))
                .as("unchanged: no write")
                .isFalse();
        assertThat(applier.apply(deployment(ns, "a", "v2"), live)).isTrue();
        assertThat(client.apps()
                        .deployments()
                        .inNamespace(ns.name())
                        .withName("a")
                        .get()
                        .getSpec()
                        .getTemplate()
                        .getMetadata()
                        .getLabels())
                .containsEntry("v", "v2");
        assertThat(metrics.count("tensorlane.applies", "kind", "Deployment")).isEqualTo(2.0);
        assertThatThrownBy(() -> applier.apply(invalid(deployment(ns, "b", "v1")), null))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("replicas");

        assertThat(applier.apply(service(ns, "a", 8000), null)).isTrue();
        Service svc = client.services().inNamespace(ns.name()).withName("a").get();
        assertThat(svc.getSpec().getClusterIP()).as("a ClusterIP was allocated").isNotBlank();
        assertThat(applier.apply(service(ns, "a", 8000), svc)).isFalse();
        assertThat(applier.apply(service(ns, "a", 9000), svc)).isTrue();
        assertThat(client.services()
                        .inNamespace(ns.name())
                        .withName("a")
                        .get()
                        .getSpec()
                        .getPorts()
                        .get(0)
                        .getPort())
                .isEqualTo(9000);
        assertThat(metrics.count("tensorlane.applies", "kind", "Service")).isEqualTo(2.0);
        assertThatThrownBy(() -> applier.apply(service(ns, "c", 70000), null))
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("port");
    }

    static Deployment invalid(Deployment d) {
        d.getSpec().setReplicas(-1); // the API server's validation rejects it
        return d;
    }

    static Deployment deployment(TestNamespace ns, String name, String version) {
        Map<String, String> labels = Map.of("app", name);
        return new DeploymentBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns.name())
                .endMetadata()
                .withNewSpec()
                .withReplicas(0)
                .withNewSelector()
                .withMatchLabels(labels)
                .endSelector()
                .withNewTemplate()
                .withNewMetadata()
                .withLabels(Map.of("app", name, "v", version))
                .endMetadata()
                .withNewSpec()
                .addNewContainer()
                .withName("c")
                .withImage("example/engine:1")
                .endContainer()
                .endSpec()
                .endTemplate()
                .endSpec()
                .build();
    }

    static Service service(TestNamespace ns, String name, int port) {
        return new ServiceBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns.name())
                .endMetadata()
                .withNewSpec()
                .withSelector(Map.of("app", name))
                .addNewPort()
                .withName("http")
                .withProtocol("TCP")
                .withPort(port)
                .endPort()
                .endSpec()
                .build();
    }
}
