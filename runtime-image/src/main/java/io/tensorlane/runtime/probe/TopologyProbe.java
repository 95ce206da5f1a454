package io.tensorlane.runtime.probe;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** One probe of this machine: NVML, CUDA cross-check, mapping, and optionally the P2P measurement. */
public final class TopologyProbe {
    private final String version;

    public TopologyProbe(String version) {
        this.version = version;
    }

    /** Probes; notes collects what a person should know (CUDA missing, disagreements, measurements). */
    public GpuTopologyStatus run(boolean measure, long measureBytes, List<String> notes) {
        RawTopology nvml = NvmlTopologyReader.fromDriver().read();
        CudaP2pReader.Answer cuda = CudaP2pReader.read();
        if (cuda.unavailable() != null) {
            notes.add("CUDA cross-check skipped: " + cuda.unavailable());
        }
        RawTopology raw =
                new RawTopology(nvml.driverVersion(), nvml.gpus(), nvml.pairs(), cuda.devices(), cuda.pairs());
        TopologyMapper.Result mapped = TopologyMapper.map(raw, version, now());
        notes.addAll(mapped.notes());
        GpuTopologyStatus status = mapped.status();
        if (measure) {
            if (cuda.unavailable() != null) {
                notes.add("--measure skipped: CUDA is not usable");
            } else {
                measure(status, TopologyMapper.cudaOrdinals(raw), measureBytes, notes);
            }
        }
        return status;
    }

    private static void measure(
            GpuTopologyStatus status, Map<Integer, Integer> ordinals, long bytes, List<String> notes) {
        P2pMeasurer measurer = new P2pMeasurer(bytes, System.nanoTime());
        List<PairMeasurement> results = new ArrayList<>();
        status.links.forEach(l -> {
            Integer oa = ordinals.get(l.a);
            Integer ob = ordinals.get(l.b);
            if (oa == null || ob == null) {
                notes.add("pair " + l.a + "-" + l.b + ": not measured, CUDA does not see both GPUs");
                return;
            }
            P2pMeasurer.Direction there = measurer.run(oa, ob);
            P2pMeasurer.Direction back = measurer.run(ob, oa);
            String note = there.note() != null ? there.note() : back.note();
            results.add(new PairMeasurement(l.a, l.b, there.verified() && back.verified(), there.gbps(), note));
            notes.add("pair " + l.a + "-" + l.b + ": P2P write/read-back "
                    + (there.verified() && back.verified() ? "ok" : "FAILED")
                    + (there.gbps() != null ? ", " + there.gbps() + " GB/s " + l.a + "->" + l.b : "")
                    + (note != null ? " (" + note + ")" : ""));
        });
        if (status.gpus.size() == 1 && ordinals.containsKey(status.gpus.get(0).index)) {
            int o = ordinals.get(status.gpus.get(0).index);
            P2pMeasurer.Direction local = measurer.run(o, o);
            notes.add("one GPU, no pair to measure; local copy check on GPU " + status.gpus.get(0).index + ": "
                    + (local.verified()
                            ? "ok, " + local.gbps() + " GB/s (device-local, not an interconnect figure)"
                            : "FAILED: " + local.note()));
        }
        PairMeasurement.apply(status, results);
    }

    static String now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
