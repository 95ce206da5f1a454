package io.tensorlane.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.tensorlane.operator.render.Renderer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The optional PodMonitor (components/podmonitor): off in the default install, on in overlays/prod-podmonitor, and
 * selecting what the renderer puts on serving pods (their labels, their named port, the engines' metrics path).
 */
class PodMonitorComponentTest {
    static List<HasMetadata> podMonitors(String dir) {
        return Manifests.kustomize(dir).stream()
                .filter(o -> "PodMonitor".equals(o.getKind()))
                .toList();
    }

    @ParameterizedTest
    @ValueSource(strings = {"manifests", "manifests/overlays/prod", "manifests/overlays/dev", "manifests/base"})
    void theDefaultInstallsHaveNone(String dir) {
        assertThat(podMonitors(dir)).isEmpty();
    }

    @Test
    @SuppressWarnings("unchecked")
    void theOverlayThatEnablesItSelectsEveryServingPodByItsLabelsPortAndPath() {
        List<HasMetadata> found = podMonitors("manifests/overlays/prod-podmonitor");
        assertThat(found).hasSize(1);
        GenericKubernetesResource pm = (GenericKubernetesResource) found.get(0);
        assertThat(pm.getApiVersion()).isEqualTo("monitoring.coreos.com/v1");
        assertThat(pm.getMetadata().getNamespace()).isEqualTo("tensorlane-system");

        Map<String, Object> spec =
                (Map<String, Object>) pm.getAdditionalProperties().get("spec");
        assertThat((Map<String, Object>) spec.get("namespaceSelector")).containsEntry("any", true);
        Map<String, Object> labels =
                (Map<String, Object>) ((Map<String, Object>) spec.get("selector")).get("matchLabels");
        assertThat(labels)
                .containsExactlyInAnyOrderEntriesOf(
                        Map.of(Renderer.LABEL_NAME, Renderer.APP_NAME, Renderer.LABEL_MANAGED_BY, Renderer.MANAGED_BY));
        List<Map<String, Object>> endpoints = (List<Map<String, Object>>) spec.get("podMetricsEndpoints");
        assertThat(endpoints).hasSize(1);
        assertThat(endpoints.get(0)).containsEntry("port", Renderer.PORT_NAME).containsEntry("path", "/metrics");
        assertThat(Manifests.kustomize("manifests/overlays/prod-podmonitor"))
                .as("the rest is the prod install")
                .hasSize(Manifests.kustomize("manifests/overlays/prod").size() + 1);
    }
}
