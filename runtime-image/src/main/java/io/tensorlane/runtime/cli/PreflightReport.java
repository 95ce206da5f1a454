package io.tensorlane.runtime.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.contract.AlgorithmTable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The preflight's result as the JSON of {@link Measurement} (the type the operator writes to
 * {@code GpuTopology.status.measurement}; the operator's PreflightMessage parses it), built from what selftest and
 * bench produced. Pure. At most {@value #MAX_BYTES} bytes: the kubelet keeps no more of a termination message, so
 * latency rows are dropped from the largest size down until it fits.
 */
public final class PreflightReport {
    public static final int MAX_BYTES = 4096;
    private static final ObjectMapper JSON = new ObjectMapper();

    private PreflightReport() {}

    /** A failed preflight: what was verified before it failed, and why. */
    public static Measurement failure(int world, Boolean p2pVerified, Boolean selftestPassed, String why) {
        Measurement m = new Measurement();
        m.worldSize = world;
        m.p2pVerified = p2pVerified;
        m.selftestPassed = selftestPassed;
        m.failure = why;
        return m;
    }

    /**
     * Success: the selftest passed on {@code world} distinct GPUs (every byte moved over P2P and checked against an fp64
     * reference, so P2P is verified), the tuned {@code table} and, per message size in {@code benchCsv}, the best custom
     * median and NCCL's.
     */
    public static Measurement success(int world, AlgorithmTable table, String benchCsv) {
        Measurement m = new Measurement();
        m.worldSize = world;
        m.p2pVerified = true;
        m.selftestPassed = true;
        for (AlgorithmTable.Row r : table.rows()) {
            m.algorithmTable.add(new AlgorithmRange(r.upToBytes(), r.algorithm().name()));
        }
        m.latencies = latencies(benchCsv);
        return m;
    }

    /** Per size: the fastest custom algorithm's median (eager or graph) and NCCL's median, from bench.csv. */
    static List<Measurement.Latency> latencies(String csv) {
        Map<Long, Measurement.Latency> bySize = new TreeMap<>();
        String[] lines = csv.split("\\R");
        if (lines.length == 0 || !lines[0].startsWith("algorithm,mode,world,dtype,bytes,median_us")) {
            throw new IllegalArgumentException(
                    "bench.csv has an unexpected header: " + (lines.length == 0 ? "" : lines[0]));
        }
        for (int i = 1; i < lines.length; i++) {
            if (lines[i].isBlank()) {
                continue;
            }
            String[] f = lines[i].split(",");
            long bytes = Long.parseLong(f[4]);
            double median = Double.parseDouble(f[5]);
            Measurement.Latency l = bySize.computeIfAbsent(bytes, b -> {
                Measurement.Latency x = new Measurement.Latency();
                x.bytes = b;
                return x;
            });
            if ("NCCL".equals(f[0])) {
                l.ncclMicros = l.ncclMicros == null ? median : Math.min(l.ncclMicros, median);
            } else if (l.customMicros == null || median < l.customMicros) {
                l.customMicros = median;
                l.algorithm = f[0];
            }
        }
        return new ArrayList<>(bySize.values());
    }

    /** Compact JSON of at most {@value #MAX_BYTES} bytes (drops latency rows, largest first, when needed). */
    public static String toJson(Measurement m) {
        try {
            String json = JSON.writeValueAsString(m);
            while (json.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES && !m.latencies.isEmpty()) {
                m.latencies.remove(m.latencies.size() - 1);
                json = JSON.writeValueAsString(m);
            }
            if (json.getBytes(StandardCharsets.UTF_8).length > MAX_BYTES && m.failure != null) {
                m.failure = m.failure.substring(0, Math.min(m.failure.length(), 1000));
                json = JSON.writeValueAsString(m);
            }
            return json;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize the preflight result", e);
        }
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
