package io.tensorlane.topology;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary;
import io.tensorlane.api.v1alpha1.TopologySummary.Interconnect;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class GfdHeuristicTest {

    static Stream<String> probedFixtures() {
        return TopologyFixtures.ALL.stream();
    }

    /** The labels GFD would put on the fixture's node, fed to the heuristic, give the probe's interconnect and P2P. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("probedFixtures")
    void agreesWithTheProbeOnEveryFixture(String name) {
        TopologySummary probed = TopologyFixtures.load(name).summary;
        GfdHeuristic.Result r = GfdHeuristic.derive(labels(
                probed.product.replace(' ', '-'),
                String.valueOf(probed.gpuCount),
                String.valueOf(probed.gpuMemoryBytes >> 20)));
        assertThat(r.derived()).as(r.reason()).isTrue();
        TopologySummary h = r.status().summary;
        assertThat(r.status().source).isEqualTo(GpuTopologyStatus.Source.heuristic);
        assertThat(h.confidence).isEqualTo(TopologyClassifier.LOW);
        assertThat(h.gpuCount).isEqualTo(probed.gpuCount);
        assertThat(h.gpuMemoryBytes).isEqualTo(probed.gpuMemoryBytes);
        assertThat(h.interconnect).isEqualTo(probed.interconnect);
        assertThat(h.p2p).isEqualTo(probed.p2p);
    }

    static Stream<Arguments> table() {
        return Stream.of(
                // product label, count, rule, interconnect, p2p, islands
                Arguments.of(
                        "NVIDIA-H100-80GB-HBM3",
                        "8",
                        "sxm",
                        Interconnect.NVLink,
                        P2p.Full,
                        List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                Arguments.of(
                        "NVIDIA-H200",
                        "8",
                        "sxm",
                        Interconnect.NVLink,
                        P2p.Full,
                        List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                Arguments.of(
                        "NVIDIA-A100-SXM4-80GB",
                        "4",
                        "sxm",
                        Interconnect.NVLink,
                        P2p.Full,
                        List.of(List.of(0, 1, 2, 3))),
                Arguments.of(
                        "NVIDIA-B200",
                        "8",
                        "sxm",
                        Interconnect.NVLink,
                        P2p.Full,
                        List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                Arguments.of("NVIDIA-H200-SHARED", "2", "sxm", Interconnect.NVLink, P2p.Full, List.of(List.of(0, 1))),
                Arguments.of(
                        "NVIDIA-H100-NVL", "2", "nvl-bridge", Interconnect.NVLink, P2p.Full, List.of(List.of(0, 1))),
                Arguments.of("NVIDIA-H200-NVL", "4", "nvl-bridge", Interconnect.Mixed, P2p.Partial, List.of()),
                Arguments.of("NVIDIA-H100-PCIe", "4", "pcie-p2p", Interconnect.PCIe, P2p.Full, List.of()),
                Arguments.of("NVIDIA-L40S", "2", "pcie-p2p", Interconnect.PCIe, P2p.Full, List.of()),
                Arguments.of("NVIDIA-RTX-6000-Ada-Generation", "4", "pcie-p2p", Interconnect.PCIe, P2p.Full, List.of()),
                Arguments.of("NVIDIA-L4", "4", "pcie", Interconnect.PCIe, P2p.None, List.of()),
                Arguments.of("NVIDIA-A10", "2", "pcie", Interconnect.PCIe, P2p.None, List.of()),
                Arguments.of("Tesla-T4", "4", "pcie", Interconnect.PCIe, P2p.None, List.of()),
                Arguments.of("NVIDIA-GeForce-RTX-5090", "2", "consumer", Interconnect.PCIe, P2p.None, List.of()),
                Arguments.of("NVIDIA-GeForce-RTX-3090", "2", "consumer", Interconnect.PCIe, P2p.None, List.of()),
                Arguments.of("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", "7", "mig", Interconnect.PCIe, P2p.None, List.of()),
                Arguments.of(
                        "NVIDIA-L40S",
                        "1",
                        "pcie-p2p",
                        Interconnect.NotApplicable,
                        P2p.NotApplicable,
                        List.of(List.of(0))),
                Arguments.of(
                        "NVIDIA-H200", "1", "sxm", Interconnect.NotApplicable, P2p.NotApplicable, List.of(List.of(0))));
    }

    @ParameterizedTest(name = "{0} x{1}")
    @MethodSource("table")
    void table(
            String product,
            String count,
            String rule,
            Interconnect interconnect,
            P2p p2p,
            List<List<Integer>> islands) {
        GfdHeuristic.Result r = GfdHeuristic.derive(labels(product, count, "1024"));
        assertThat(r.rule()).isEqualTo(rule);
        assertThat(r.reason()).isNotBlank();
        TopologySummary s = r.status().summary;
        assertThat(s.gpuCount).isEqualTo(Integer.parseInt(count));
        assertThat(s.product).isEqualTo(product.replaceFirst("-SHARED$", ""));
        assertThat(s.gpuMemoryBytes).isEqualTo(1L << 30);
        assertThat(s.interconnect).isEqualTo(interconnect);
        assertThat(s.p2p).isEqualTo(p2p);
        assertThat(s.islands).isEqualTo(islands);
        assertThat(s.confidence).isEqualTo(TopologyClassifier.LOW);
    }

    static Stream<Arguments> badLabels() {
        return Stream.of(
                Arguments.of(Map.of(), "no GPU Feature Discovery labels"),
                Arguments.of(Map.of(GfdHeuristic.PRODUCT, "NVIDIA-L4"), "no GPU Feature Discovery labels"),
                Arguments.of(labels("NVIDIA-L4", "two", null), "nvidia.com/gpu.count='two' is not a positive integer"),
                Arguments.of(labels("NVIDIA-L4", "0", null), "nvidia.com/gpu.count='0' is not a positive integer"),
                Arguments.of(
                        labels("NVIDIA-L4", "2", "lots"),
                        "nvidia.com/gpu.memory='lots' is not a positive number of MiB"));
    }

    @ParameterizedTest(name = "{1}")
    @MethodSource("badLabels")
    void badLabelsGiveAReasonNotAnException(Map<String, String> labels, String reason) {
        GfdHeuristic.Result r = GfdHeuristic.derive(labels);
        assertThat(r.derived()).isFalse();
        assertThat(r.reason()).contains(reason);
    }

    @org.junit.jupiter.api.Test
    void memoryLabelIsOptional() {
        GfdHeuristic.Result r = GfdHeuristic.derive(labels("NVIDIA-L4", "2", null));
        assertThat(r.derived()).isTrue();
        assertThat(r.status().summary.gpuMemoryBytes).isNull();
    }

    static Map<String, String> labels(String product, String count, String mib) {
        Map<String, String> m = new HashMap<>();
        m.put(GfdHeuristic.PRODUCT, product);
        m.put(GfdHeuristic.COUNT, count);
        if (mib != null) {
            m.put(GfdHeuristic.MEMORY, mib);
        }
        return m;
    }
}
