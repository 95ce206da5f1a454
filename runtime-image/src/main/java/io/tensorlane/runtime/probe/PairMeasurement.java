package io.tensorlane.runtime.probe;

import io.tensorlane.api.v1alpha1.GpuLink;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.topology.TopologyClassifier;
import java.util.List;
import java.util.Objects;

/**
 * The outcome of {@code --measure} for one GPU pair (NVML indices a < b): whether a real write/read-back over P2P
 * returned the data in both directions, and the a -> b copy bandwidth (null when not measured), with a note.
 */
public record PairMeasurement(int a, int b, boolean verified, Double bandwidthGBps, String note) {

    /**
     * Writes the measurements into the links (each pair's p2pVerified and bandwidthGBps) and recomputes the summary (a
     * failed check makes that pair not P2P-usable). Leaves {@code status.measurement} alone: that field belongs to the
     * operator's preflight (time, world size, selftest, tuned table), which a periodic {@code probe --measure} must not
     * overwrite. Pure; returns the same status.
     */
    public static GpuTopologyStatus apply(GpuTopologyStatus status, List<PairMeasurement> results) {
        for (PairMeasurement m : results) {
            for (GpuLink l : status.links) {
                if (Objects.equals(l.a, Math.min(m.a, m.b)) && Objects.equals(l.b, Math.max(m.a, m.b))) {
                    l.p2pVerified = m.verified;
                    l.bandwidthGBps = m.bandwidthGBps;
                }
            }
        }
        return TopologyClassifier.withSummary(status);
    }
}
