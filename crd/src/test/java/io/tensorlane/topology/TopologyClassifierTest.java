package io.tensorlane.topology;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.api.v1alpha1.GpuInfo;
import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuLink.LinkType;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary;
import io.tensorlane.api.v1alpha1.TopologySummary.Interconnect;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class TopologyClassifierTest {

    static Stream<Arguments> fixtures() {
        return Stream.of(
                Arguments.of(
                        TopologyFixtures.H200_SXM_8,
                        8,
                        "NVIDIA H200",
                        150754820096L,
                        Interconnect.NVLink,
                        P2p.Full,
                        List.of(List.of(0, 1, 2, 3, 4, 5, 6, 7))),
                Arguments.of(
                        TopologyFixtures.RTX_PRO_6000_PCIE_8,
                        8,
                        "NVIDIA RTX PRO 6000 Blackwell Server Edition",
                        97887L << 20,
                        Interconnect.PCIe,
                        P2p.Full,
                        List.of(List.of(0, 1, 2, 3), List.of(4, 5, 6, 7))),
                Arguments.of(
                        TopologyFixtures.RTX_4090_4,
                        4,
                        "NVIDIA GeForce RTX 4090",
                        24564L << 20,
                        Interconnect.PCIe,
                        P2p.None,
                        List.of(List.of(0), List.of(1), List.of(2), List.of(3))),
                Arguments.of(
                        TopologyFixtures.L40S_2,
                        2,
                        "NVIDIA L40S",
                        46068L << 20,
                        Interconnect.PCIe,
                        P2p.Full,
                        List.of(List.of(0), List.of(1))),
                Arguments.of(
                        TopologyFixtures.A100_PCIE_4,
                        4,
                        "NVIDIA A100 80GB PCIe",
                        81920L << 20,
                        Interconnect.PCIe,
                        P2p.Full,
                        List.of(List.of(0, 1, 2, 3))),
                Arguments.of(
                        TopologyFixtures.MIXED_4,
                        4,
                        "NVIDIA H100 NVL",
                        95830L << 20,
                        Interconnect.Mixed,
                        P2p.Partial,
                        List.of(List.of(0, 1), List.of(2, 3))),
                // recorded by the probe on the device machine: what the probe printed there
                Arguments.of(
                        TopologyFixtures.H200_1,
                        1,
                        "NVIDIA H200",
                        150754820096L,
                        Interconnect.NotApplicable,
                        P2p.NotApplicable,
                        List.of(List.of(0))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void classifiesFixture(
            String name,
            int count,
            String product,
            long memory,
            Interconnect interconnect,
            P2p p2p,
            List<List<Integer>> islands) {
        GpuTopologyStatus status = TopologyFixtures.load(name);
        TopologySummary s = status.summary;
        assertThat(s.gpuCount).isEqualTo(count);
        assertThat(s.product).isEqualTo(product);
        assertThat(s.gpuMemoryBytes).isEqualTo(memory);
        assertThat(s.interconnect).isEqualTo(interconnect);
        assertThat(s.p2p).isEqualTo(p2p);
        assertThat(s.islands).isEqualTo(islands);
        assertThat(s.confidence).isEqualTo(TopologyClassifier.HIGH);
        assertThat(TopologyClassifier.problems(status)).isEmpty();
        assertThat(status.links).hasSize(count * (count - 1) / 2);
    }

    @Test
    void everyListedFixtureLoadsAndIsCovered() {
        assertThat(fixtures().map(a -> (String) a.get()[0]).toList())
                .containsExactlyInAnyOrderElementsOf(TopologyFixtures.ALL);
        TopologyFixtures.ALL.forEach(
                n -> assertThat(TopologyFixtures.load(n).source).isEqualTo(GpuTopologyStatus.Source.probe));
    }

    @Test
    void unknownFixtureNamesTheKnownOnes() {
        assertThatThrownBy(() -> TopologyFixtures.load("nope"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nope")
                .hasMessageContaining("h200-sxm-8");
    }

    static Stream<Arguments> edgeCases() {
        return Stream.of(
                // name, gpus, links, interconnect, p2p, islands, confidence
                Arguments.of(
                        "no gpus",
                        List.of(),
                        List.of(),
                        Interconnect.NotApplicable,
                        P2p.NotApplicable,
                        List.of(),
                        "High"),
                Arguments.of(
                        "one gpu",
                        gpus("A"),
                        List.of(),
                        Interconnect.NotApplicable,
                        P2p.NotApplicable,
                        List.of(List.of(0)),
                        "High"),
                Arguments.of(
                        "missing pair is not NV and not P2P",
                        gpus("A", "A", "A"),
                        List.of(link(0, 1, LinkType.NV, true), link(1, 2, LinkType.NV, true)),
                        Interconnect.Mixed,
                        P2p.Partial,
                        List.of(),
                        "Low"),
                Arguments.of(
                        "verified false overrides the driver",
                        gpus("A", "A"),
                        List.of(verified(link(0, 1, LinkType.PIX, true), false)),
                        Interconnect.PCIe,
                        P2p.None,
                        List.of(List.of(0, 1)),
                        "High"),
                Arguments.of(
                        "verified true keeps P2P",
                        gpus("A", "A"),
                        List.of(verified(link(0, 1, LinkType.PIX, true), true)),
                        Interconnect.PCIe,
                        P2p.Full,
                        List.of(List.of(0, 1)),
                        "High"),
                Arguments.of(
                        "read without write is not usable",
                        gpus("A", "A"),
                        List.of(readOnly(link(0, 1, LinkType.PXB, false))),
                        Interconnect.PCIe,
                        P2p.None,
                        List.of(List.of(0, 1)),
                        "High"),
                Arguments.of(
                        "reversed pair and out-of-range link",
                        gpus("A", "A"),
                        List.of(link(1, 0, LinkType.SYS, true), link(0, 7, LinkType.NV, true)),
                        Interconnect.PCIe,
                        P2p.Full,
                        List.of(List.of(0), List.of(1)),
                        "High"),
                Arguments.of(
                        "one socket, two switches: split by switch",
                        gpus("A", "A", "A", "A"),
                        List.of(
                                link(0, 1, LinkType.PIX, true),
                                link(2, 3, LinkType.PXB, true),
                                link(0, 2, LinkType.NODE, true),
                                link(0, 3, LinkType.NODE, true),
                                link(1, 2, LinkType.NODE, true),
                                link(1, 3, LinkType.NODE, true)),
                        Interconnect.PCIe,
                        P2p.Full,
                        List.of(List.of(0, 1), List.of(2, 3)),
                        "High"),
                Arguments.of(
                        "NV pair joins across sockets",
                        gpus("A", "A", "A"),
                        List.of(
                                link(0, 1, LinkType.NV, true),
                                link(0, 2, LinkType.SYS, false),
                                link(1, 2, LinkType.SYS, false)),
                        Interconnect.Mixed,
                        P2p.Partial,
                        List.of(List.of(0, 1), List.of(2)),
                        "High"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("edgeCases")
    void edgeCase(
            String name,
            List<GpuInfo> gpus,
            List<GpuLink> links,
            Interconnect interconnect,
            P2p p2p,
            List<List<Integer>> islands,
            String confidence) {
        GpuTopologyStatus st = new GpuTopologyStatus();
        st.source = GpuTopologyStatus.Source.probe;
        st.gpus.addAll(gpus);
        st.links.addAll(links);
        TopologySummary s = TopologyClassifier.classify(st);
        assertThat(s.gpuCount).isEqualTo(gpus.size());
        assertThat(s.interconnect).isEqualTo(interconnect);
        assertThat(s.p2p).isEqualTo(p2p);
        assertThat(s.islands).isEqualTo(islands);
        assertThat(s.confidence).isEqualTo(confidence);
    }

    @Test
    void mixedProductsAndSmallestMemory() {
        GpuTopologyStatus st = new GpuTopologyStatus();
        st.gpus.addAll(gpus("A", "B"));
        st.gpus.get(1).memoryBytes = 5L;
        TopologySummary s = TopologyClassifier.classify(st);
        assertThat(s.product).isEqualTo(TopologyClassifier.MIXED_PRODUCT);
        assertThat(s.gpuMemoryBytes).isEqualTo(5L);
        assertThat(s.confidence).isEqualTo(TopologyClassifier.LOW);
    }

    @Test
    void problemsNameBadLinksAndDuplicates() {
        GpuTopologyStatus st = new GpuTopologyStatus();
        st.gpus.addAll(gpus("A", "A"));
        st.links.addAll(List.of(
                link(0, 1, LinkType.NV, true),
                link(1, 0, LinkType.SYS, false),
                link(1, 1, LinkType.NV, true),
                link(0, 9, LinkType.NV, true)));
        assertThat(TopologyClassifier.problems(st))
                .containsExactly(
                        "links[1] repeats pair 0-1; the first entry is used",
                        "links[2] does not join two distinct GPUs of this node; ignored",
                        "links[3] does not join two distinct GPUs of this node; ignored");
        assertThat(TopologyClassifier.classify(st).interconnect).isEqualTo(Interconnect.NVLink);
    }

    static List<GpuInfo> gpus(String... products) {
        return java.util.stream.IntStream.range(0, products.length)
                .mapToObj(i -> {
                    GpuInfo g = new GpuInfo();
                    g.index = i;
                    g.product = products[i];
                    g.memoryBytes = 10L + i;
                    return g;
                })
                .toList();
    }

    static GpuLink link(int a, int b, LinkType type, boolean p2p) {
        GpuLink l = new GpuLink();
        l.a = a;
        l.b = b;
        l.type = type;
        l.p2pRead = p2p;
        l.p2pWrite = p2p;
        return l;
    }

    static GpuLink verified(GpuLink l, boolean ok) {
        l.p2pVerified = ok;
        return l;
    }

    static GpuLink readOnly(GpuLink l) {
        l.p2pRead = true;
        l.p2pWrite = false;
        return l;
    }
}
