package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which pods the placement's GPU-per-node index holds, and the namespace index (the index itself: the e2e tests). */
class PodIndexTest {
    private static Pod pod(String node, String phase, String limitGpus, String requestGpus) {
        var b = new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withNamespace("team-a")
                .endMetadata()
                .withNewSpec()
                .withNodeName(node.isEmpty() ? null : node)
                .addNewContainer()
                .withName("c")
                .withNewResources()
                .endResources()
                .endContainer()
                .endSpec()
                .withNewStatus()
                .withPhase(phase.isEmpty() ? null : phase)
                .endStatus();
        Pod p = b.build();
        var r = p.getSpec().getContainers().get(0).getResources();
        if (!limitGpus.isEmpty()) {
            r.setLimits(Map.of("nvidia.com/gpu", new Quantity(limitGpus)));
        }
        if (!requestGpus.isEmpty()) {
            r.setRequests(Map.of("nvidia.com/gpu", new Quantity(requestGpus)));
        }
        return p;
    }

    @ParameterizedTest(name = "node ''{0}'', phase ''{1}'', limit ''{2}'', request ''{3}'' -> ''{4}''")
    @CsvSource({
        "gpu-1, Running, 8, '', gpu-1",
        "gpu-1, Pending, '', 2, gpu-1", // bound, starting: it holds the GPUs already
        "gpu-1, '', 1, '', gpu-1",
        "'', Pending, 8, '', ''", // not bound: no node's GPUs yet
        "gpu-1, Succeeded, 8, '', ''", // finished: its GPUs are free again
        "gpu-1, Failed, 8, '', ''",
        "gpu-1, Running, '', '', ''", // no GPUs
        "gpu-1, Running, 0, '', ''",
    })
    void gpuPodsAreIndexedByTheirNodeWhileTheyHoldTheGpus(
            String node, String phase, String limit, String request, String key) {
        assertThat(PodIndex.gpuNode(pod(node, phase, limit, request)))
                .isEqualTo(key.isEmpty() ? List.of() : List.of(key));
    }

    @Test
    void everyPodIsIndexedByItsNamespace() {
        assertThat(PodIndex.namespace(pod("", "", "", ""))).containsExactly("team-a");
        assertThat(PodIndex.indexers()).containsOnlyKeys(PodIndex.NAMESPACE, PodIndex.GPU_NODE);
    }
}
