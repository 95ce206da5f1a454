package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import org.junit.jupiter.api.Test;

class PairMeasurementTest {

    @Test
    void aFailedCheckTakesThePairOutOfP2p() {
        GpuTopologyStatus s = TopologyFixtures.load(TopologyFixtures.L40S_2);
        assertThat(s.summary.p2p).isEqualTo(P2p.Full);
        PairMeasurement.apply(s, List.of(new PairMeasurement(1, 0, false, null, "read-back differs at byte 0 of 64")));
        assertThat(s.links.get(0).p2pVerified).isFalse();
        assertThat(s.summary.p2p).isEqualTo(P2p.None);
        assertThat(s.measurement).as("status.measurement is the preflight's").isNull();
    }

    @Test
    void verifiedPairsKeepP2pAndCarryBandwidth() {
        GpuTopologyStatus s = TopologyFixtures.load(TopologyFixtures.L40S_2);
        PairMeasurement.apply(s, List.of(new PairMeasurement(0, 1, true, 25.1, null)));
        assertThat(s.links.get(0).bandwidthGBps).isEqualTo(25.1);
        assertThat(s.summary.p2p).isEqualTo(P2p.Full);
        assertThat(s.measurement).isNull();
    }

    @Test
    void noPairsLeavesLinksAndMeasurementUnset() {
        GpuTopologyStatus s = TopologyFixtures.load(TopologyFixtures.L40S_2);
        s.links.clear();
        s.gpus.remove(1);
        PairMeasurement.apply(s, List.of());
        assertThat(s.measurement).isNull();
        assertThat(s.summary.p2p).isEqualTo(P2p.NotApplicable);
    }
}
