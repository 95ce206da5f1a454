package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuLink.LinkType;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** nvidia-smi's path types → the NCCL_P2P_LEVEL names NCCL parses (NCCL 2.28.9 topoPathTypeStr). */
class NcclP2pLevelTest {
    static final Map<LinkType, String> TABLE = new EnumMap<>(Map.of(
            LinkType.NV, "NVL",
            LinkType.PIX, "PIX",
            LinkType.PXB, "PXB",
            LinkType.PHB, "PHB",
            LinkType.NODE, "PHB",
            LinkType.SYS, "SYS"));

    @Test
    void theTableCoversEveryLinkType() {
        assertThat(TABLE.keySet()).containsExactlyInAnyOrder(LinkType.values());
    }

    @ParameterizedTest
    @EnumSource(LinkType.class)
    void mapsEachPathTypeToItsNcclLevel(LinkType type) {
        assertThat(NcclP2pLevel.of(type)).isEqualTo(TABLE.get(type));
    }

    /** A PCIe node with full P2P whose worst pair is {@code worst}: the NCCL_P2P_LEVEL the planner renders. */
    static String renderedLevel(LinkType worst) {
        GpuTopologyStatus t = new GpuTopologyStatus();
        t.summary = new TopologySummary();
        t.summary.interconnect = TopologySummary.Interconnect.PCIe;
        t.summary.p2p = TopologySummary.P2p.Full;
        t.summary.islands = List.of(List.of(0, 1, 2));
        GpuLink near = new GpuLink();
        near.a = 0;
        near.b = 1;
        near.type = LinkType.PIX;
        GpuLink far = new GpuLink();
        far.a = 0;
        far.b = 2;
        far.type = worst;
        t.links = List.of(near, far);
        return AllreduceChooser.ncclEnv(t).stream()
                .filter(e -> e.name().equals("NCCL_P2P_LEVEL"))
                .map(AllreduceChoice.NcclEnv::value)
                .findFirst()
                .orElse(null);
    }

    @Test
    void aNodeWhoseWorstPathIsNodeGetsPhbNotAnUnknownName() {
        assertThat(renderedLevel(LinkType.NODE)).isEqualTo("PHB");
        assertThat(renderedLevel(LinkType.PHB)).isEqualTo("PHB");
        assertThat(renderedLevel(LinkType.SYS)).isEqualTo("SYS");
        assertThat(Arrays.stream(LinkType.values()).map(NcclP2pLevelTest::renderedLevel))
                .as("nothing outside NCCL's names")
                .allSatisfy(l -> assertThat(l).isIn(null, "PHB", "SYS"));
    }
}
