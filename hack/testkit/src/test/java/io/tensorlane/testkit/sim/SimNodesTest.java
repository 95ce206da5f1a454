package io.tensorlane.testkit.sim;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SimNodesTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "h200-sxm-8,          NVIDIA-H200,                                  8",
        "rtx-pro-6000-pcie-8, NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition, 8",
        "rtx-4090-4,          NVIDIA-GeForce-RTX-4090,                      4",
        "l40s-2,              NVIDIA-L40S,                                  2"
    })
    void nodeFromFixture(String fixture, String product, int gpus) {
        var topo = TopologyFixtures.load(fixture);
        Node n = SimNodes.node("n1", fixture, topo, Map.of("team", "a"), "10.99.0.1", Instant.EPOCH);
        long mib = topo.gpus.get(0).memoryBytes / (1024 * 1024);
        assertThat(n.getMetadata().getLabels())
                .containsEntry("nvidia.com/gpu.product", product)
                .containsEntry("nvidia.com/gpu.count", Integer.toString(gpus))
                .containsEntry("nvidia.com/gpu.memory", Long.toString(mib))
                .containsEntry("nvidia.com/gpu.present", "true")
                .containsEntry(SimNodes.SIMULATED, "true")
                .containsEntry(SimNodes.FIXTURE, fixture)
                .containsEntry("team", "a");
        assertThat(n.getStatus().getCapacity().get("nvidia.com/gpu")).isEqualTo(new Quantity(Integer.toString(gpus)));
        assertThat(n.getStatus().getAllocatable()).isEqualTo(n.getStatus().getCapacity());
        assertThat(n.getStatus().getConditions())
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
        assertThat(n.getMetadata().getLabels().values())
                .allMatch(v -> v.length() <= 63 && v.matches("[A-Za-z0-9_.-]*"));
    }
}
