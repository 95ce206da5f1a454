package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuLink.LinkType;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary;
import io.tensorlane.api.v1alpha1.TopologySummary.Interconnect;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import io.tensorlane.topology.TopologyFixtures;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Raw driver answers (as NVML and CUDA give them on such machines) mapped to a status. */
class TopologyMapperTest {
    static final int OK = 0;
    static final int NOT_SUPPORTED = 5;

    /** Raw answers of node types whose classified summary must equal the committed fixture's. */
    static Stream<Arguments> nodes() {
        return Stream.of(
                Arguments.of("8x H200 HGX: 18 links each to NVSwitches", h200Hgx8(), TopologyFixtures.H200_SXM_8),
                Arguments.of("4x H100 NVL: bridged pairs, no P2P across sockets", h100Nvl4(), TopologyFixtures.MIXED_4),
                Arguments.of("8x RTX PRO 6000: NODE/SYS, P2P", rtxPro8(), TopologyFixtures.RTX_PRO_6000_PCIE_8));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("nodes")
    void mapsLikeTheFixture(String name, RawTopology raw, String fixture) {
        TopologyMapper.Result r = TopologyMapper.map(raw, "test", "2026-11-29T00:00:00Z");
        GpuTopologyStatus expected = TopologyFixtures.load(fixture);
        TopologySummary s = r.status().summary;
        assertThat(r.notes()).isEmpty();
        assertThat(r.status().measurement)
                .as("status.measurement is the preflight's")
                .isNull();
        assertThat(s.gpuCount).isEqualTo(expected.summary.gpuCount);
        assertThat(s.interconnect).isEqualTo(expected.summary.interconnect);
        assertThat(s.p2p).isEqualTo(expected.summary.p2p);
        assertThat(s.islands).isEqualTo(expected.summary.islands);
        assertThat(s.confidence).isEqualTo("High");
        for (int i = 0; i < expected.links.size(); i++) {
            GpuLink want = expected.links.get(i);
            GpuLink got = r.status().links.get(i);
            assertThat(List.of(got.a, got.b, got.type, got.nvlinks, got.p2pRead, got.p2pWrite))
                    .as("link %d-%d", want.a, want.b)
                    .isEqualTo(List.of(want.a, want.b, want.type, want.nvlinks, want.p2pRead, want.p2pWrite));
        }
    }

    @ParameterizedTest(name = "level {0} -> {1}")
    @CsvSource({"0, PIX", "10, PIX", "20, PXB", "30, PHB", "40, NODE", "50, SYS"})
    void commonAncestorLevels(int level, LinkType type) {
        assertThat(TopologyMapper.pcieLevel(level)).isEqualTo(type);
    }

    @Test
    void unknownAncestorIsNamed() {
        RawTopology raw = raw(
                List.of(gpu(0, 0x18, null, List.of()), gpu(1, 0x2a, null, List.of())),
                List.of(new RawTopology.Pair(0, 1, 77, OK, OK, OK, NOT_SUPPORTED)),
                List.of(),
                List.of());
        TopologyMapper.Result r = TopologyMapper.map(raw, "t", "t");
        assertThat(r.status().links.get(0).type).isNull();
        assertThat(r.status().summary.confidence).isEqualTo("Low");
        assertThat(r.notes()).containsExactly("pair 0-1: common ancestor unknown (77)");
    }

    /** The RTX 4090 case: NVML calls the pair P2P-capable, CUDA denies access; the mapper keeps the denial. */
    @Test
    void cudaDenialWins() {
        RawTopology raw = raw(
                List.of(gpu(0, 0x01, 0, List.of()), gpu(1, 0x21, 0, List.of())),
                List.of(new RawTopology.Pair(0, 1, 40, OK, OK, NOT_SUPPORTED, NOT_SUPPORTED)),
                List.of(cuda(0, 0x01, 8, 9), cuda(1, 0x21, 8, 9)),
                List.of(
                        new RawTopology.CudaPair(0, 1, false, false, 0),
                        new RawTopology.CudaPair(1, 0, false, false, 0)));
        TopologyMapper.Result r = TopologyMapper.map(raw, "t", "t");
        GpuLink l = r.status().links.get(0);
        assertThat(List.of(l.p2pRead, l.p2pWrite, l.p2pAtomics)).containsExactly(false, false, false);
        assertThat(r.status().summary.p2p).isEqualTo(P2p.None);
        assertThat(r.notes())
                .contains(
                        "pair 0-1: NVML reports P2P read but CUDA denies it; reported as false",
                        "pair 0-1: NVML reports P2P write but CUDA denies it; reported as false");
    }

    /** CUDA's default order (fastest first) differs from NVML's PCI order: compute capability follows the PCI id. */
    @Test
    void cudaDevicesMatchedByPciLocation() {
        RawTopology raw = raw(
                List.of(gpu(0, 0x18, null, List.of()), gpu(1, 0x2a, null, List.of())),
                List.of(new RawTopology.Pair(0, 1, 30, OK, OK, OK, NOT_SUPPORTED)),
                List.of(cuda(0, 0x2a, 8, 9), cuda(1, 0x18, 9, 0)),
                List.of(new RawTopology.CudaPair(0, 1, true, true, 0), new RawTopology.CudaPair(1, 0, true, false, 0)));
        TopologyMapper.Result r = TopologyMapper.map(raw, "t", "t");
        assertThat(r.status().gpus.get(0).computeCapability).isEqualTo("9.0");
        assertThat(r.status().gpus.get(1).computeCapability).isEqualTo("8.9");
        assertThat(TopologyMapper.cudaOrdinals(raw)).containsEntry(0, 1).containsEntry(1, 0);
        assertThat(r.status().links.get(0).p2pAtomics).isFalse(); // one direction lacks native atomics
        assertThat(r.status().links.get(0).p2pRead).isTrue();
    }

    @Test
    void oneGpuIsNotApplicableAndKeepsUnknownNuma() {
        RawTopology raw =
                raw(List.of(gpu(0, 0x18, null, List.of())), List.of(), List.of(cuda(0, 0x18, 9, 0)), List.of());
        TopologyMapper.Result r = TopologyMapper.map(raw, "tensorlane-probe/x", "2026-11-29T00:00:00Z");
        GpuTopologyStatus s = r.status();
        assertThat(s.gpus.get(0).numaNode).isNull();
        assertThat(s.gpus.get(0).computeCapability).isEqualTo("9.0");
        assertThat(s.summary.interconnect).isEqualTo(Interconnect.NotApplicable);
        assertThat(s.summary.p2p).isEqualTo(P2p.NotApplicable);
        assertThat(s.probeVersion).isEqualTo("tensorlane-probe/x");
        assertThat(s.source).isEqualTo(GpuTopologyStatus.Source.probe);
        assertThat(r.notes()).isEmpty();
    }

    @Test
    void unmatchedCudaDevicesAreNamed() {
        RawTopology raw =
                raw(List.of(gpu(0, 0x18, null, List.of())), List.of(), List.of(cuda(0, 0x99, 9, 0)), List.of());
        TopologyMapper.Result r = TopologyMapper.map(raw, "t", "t");
        assertThat(r.status().gpus.get(0).computeCapability).isEqualTo("9.0"); // NVML's answer as fallback
        assertThat(r.notes()).singleElement().asString().contains("0 of 1 NVML GPU(s) matched");
    }

    @ParameterizedTest
    @CsvSource({"00000000:18:00.0, 0, 24, 0", "0001:AB:1F.0, 1, 171, 31"})
    void parsesBusIds(String busId, int domain, int bus, int device) {
        assertThat(TopologyMapper.parseBusId(busId)).containsExactly(domain, bus, device);
    }

    // ---- recorded-style raw answers ----

    static RawTopology h200Hgx8() {
        List<RawTopology.Gpu> gpus = new ArrayList<>();
        int[] bus = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
        for (int i = 0; i < 8; i++) {
            List<RawTopology.NvLinkEnd> ends = IntStream.range(0, 18)
                    .mapToObj(k -> new RawTopology.NvLinkEnd(
                            String.format("00000000:%02X:00.0", 0x05 + k % 4), Nvml.NVLINK_DEVICE_TYPE_SWITCH))
                    .toList();
            gpus.add(gpu(i, bus[i], i / 4, ends));
        }
        List<RawTopology.Pair> pairs = new ArrayList<>();
        forPairs(8, (a, b) -> pairs.add(new RawTopology.Pair(a, b, a / 4 == b / 4 ? 40 : 50, OK, OK, OK, OK)));
        return raw(gpus, pairs, List.of(), List.of());
    }

    static RawTopology h100Nvl4() {
        int[] bus = {0x1b, 0x3d, 0x9c, 0xbd};
        List<RawTopology.Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            String peer = String.format("00000000:%02X:00.0", bus[i ^ 1]);
            gpus.add(gpu(
                    i,
                    bus[i],
                    i / 2,
                    IntStream.range(0, 12)
                            .mapToObj(k -> new RawTopology.NvLinkEnd(peer, Nvml.NVLINK_DEVICE_TYPE_GPU))
                            .toList()));
        }
        List<RawTopology.Pair> pairs = new ArrayList<>();
        forPairs(
                4,
                (a, b) -> pairs.add(
                        a / 2 == b / 2
                                ? new RawTopology.Pair(a, b, 40, OK, OK, OK, OK)
                                : new RawTopology.Pair(a, b, 50, 1, 1, 1, NOT_SUPPORTED)));
        return raw(gpus, pairs, List.of(), List.of());
    }

    static RawTopology rtxPro8() {
        int[] bus = {0x01, 0x21, 0x41, 0x61, 0x81, 0xa1, 0xc1, 0xe1};
        List<RawTopology.Gpu> gpus = new ArrayList<>();
        List<RawTopology.CudaDevice> cuda = new ArrayList<>();
        List<RawTopology.CudaPair> cudaPairs = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            gpus.add(gpu(i, bus[i], i / 4, List.of()));
            cuda.add(cuda(i, bus[i], 12, 0));
            for (int j = 0; j < 8; j++) {
                if (i != j) {
                    cudaPairs.add(new RawTopology.CudaPair(i, j, true, false, i / 4 == j / 4 ? 0 : 1));
                }
            }
        }
        List<RawTopology.Pair> pairs = new ArrayList<>();
        forPairs(
                8,
                (a, b) -> pairs.add(
                        new RawTopology.Pair(a, b, a / 4 == b / 4 ? 40 : 50, OK, OK, NOT_SUPPORTED, NOT_SUPPORTED)));
        return raw(gpus, pairs, cuda, cudaPairs);
    }

    static void forPairs(int n, java.util.function.BiConsumer<Integer, Integer> f) {
        for (int a = 0; a < n; a++) {
            for (int b = a + 1; b < n; b++) {
                f.accept(a, b);
            }
        }
    }

    static RawTopology.Gpu gpu(int index, int bus, Integer numa, List<RawTopology.NvLinkEnd> links) {
        return new RawTopology.Gpu(
                index,
                "NVIDIA Test",
                "GPU-" + index,
                1L << 34,
                String.format("00000000:%02X:00.0", bus),
                numa,
                "9.0",
                links);
    }

    static RawTopology.CudaDevice cuda(int ordinal, int bus, int major, int minor) {
        return new RawTopology.CudaDevice(ordinal, 0, bus, 0, major, minor);
    }

    static RawTopology raw(
            List<RawTopology.Gpu> gpus,
            List<RawTopology.Pair> pairs,
            List<RawTopology.CudaDevice> cuda,
            List<RawTopology.CudaPair> cudaPairs) {
        return new RawTopology("580.95.05", gpus, pairs, cuda, cudaPairs);
    }
}
