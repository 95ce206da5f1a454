package io.tensorlane.operator.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Quantity;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.operator.plan.TopologyLabels;
import io.tensorlane.topology.GfdHeuristic;
import io.tensorlane.topology.TopologyClassifier;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NodeLabelDecisionTest {
    static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
    static final Map<String, Quantity> GPUS = Map.of("nvidia.com/gpu", new Quantity("8"));
    static final Map<String, String> GFD_H100 = Map.of(
            GfdHeuristic.PRODUCT, "NVIDIA-H100-80GB-HBM3", GfdHeuristic.COUNT, "8", GfdHeuristic.MEMORY, "81559");

    static GpuTopology topo(String fixture, GpuTopologyStatus.Source source, Instant probeTime) {
        GpuTopology t = new GpuTopology();
        t.getMetadata().setName("n");
        GpuTopologyStatus s = TopologyClassifier.withSummary(TopologyFixtures.load(fixture));
        s.source = source;
        s.probeTime = probeTime == null ? null : probeTime.toString();
        t.setStatus(s);
        return t;
    }

    static Stream<Arguments> cases() {
        GpuTopology probe = topo(TopologyFixtures.RTX_PRO_6000_PCIE_8, GpuTopologyStatus.Source.probe, NOW);
        GpuTopology old = topo(
                TopologyFixtures.RTX_PRO_6000_PCIE_8, GpuTopologyStatus.Source.probe, NOW.minus(Duration.ofDays(8)));
        GpuTopology noStatus = new GpuTopology();
        noStatus.setStatus(null);
        GpuTopology heuristicH100 = new GpuTopology();
        heuristicH100.setStatus(GfdHeuristic.derive(GFD_H100).status());
        return Stream.of(
                // name, labels, capacity, topology, expected interconnect label (null: none), heuristic written, stale
                Arguments.of("probe result → its labels", GFD_H100, GPUS, probe, "PCIe", false, false),
                Arguments.of("probe result wins over GFD labels", GFD_H100, GPUS, probe, "PCIe", false, false),
                Arguments.of("old probe result → Stale, labels kept", Map.of(), GPUS, old, "PCIe", false, true),
                Arguments.of(
                        "GPU node, GFD labels, no topology → heuristic", GFD_H100, GPUS, null, "NVLink", true, false),
                Arguments.of(
                        "existing heuristic unchanged → no write",
                        GFD_H100,
                        GPUS,
                        heuristicH100,
                        "NVLink",
                        false,
                        false),
                Arguments.of("GPU node without GFD labels → nothing", Map.of(), GPUS, null, null, false, false),
                Arguments.of("no GPUs → no labels", GFD_H100, Map.of(), null, null, false, false),
                Arguments.of(
                        "publisher created it, no status yet → wait", GFD_H100, GPUS, noStatus, null, false, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void decides(
            String name,
            Map<String, String> labels,
            Map<String, Quantity> capacity,
            GpuTopology topology,
            String interconnect,
            boolean heuristic,
            boolean stale) {
        NodeLabelDecision d = NodeLabelDecision.decide(labels, capacity, topology, NOW, Duration.ofDays(7));
        assertThat(d.labels().get(TopologyLabels.INTERCONNECT)).isEqualTo(interconnect);
        assertThat(d.heuristic() != null).isEqualTo(heuristic);
        if (heuristic) {
            assertThat(d.heuristic().source).isEqualTo(GpuTopologyStatus.Source.heuristic);
        }
        assertThat(d.stale()).isEqualTo(stale);
        assertThat(d.reason()).isNotBlank();
        assertThat(d.labels().keySet()).isSubsetOf(NodeLabelDecision.KEYS);
    }
}
