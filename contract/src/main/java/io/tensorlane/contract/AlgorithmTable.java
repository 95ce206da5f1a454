package io.tensorlane.contract;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Message size → algorithm for the custom allreduce, in the one shape every part of Tensorlane uses: rows of
 * {@code (upToBytes, algorithm)}, ascending, each row holding from just above the previous row's bound up to and
 * including its own, from 1 byte up to {@link #maxMessageBytes()}. The same rows appear in the API
 * ({@code status.allreduce.table}, {@code GpuTopology.status.measurement.algorithmTable}) and in the runtime's
 * {@link EngineEnv#ALGORITHM_TABLE}. Larger messages are not handled by the table ({@link #select} throws): callers
 * route them to NCCL. Pure value; JSON via Jackson.
 *
 * <pre>{"worldSize":8,"source":"preflight","rows":[{"upToBytes":524288,"algorithm":"OneStage"}, ...]}</pre>
 */
public record AlgorithmTable(int worldSize, String source, List<Row> rows) {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    /** The default split on NVLink: OneStage is latency-bound and wins below, the bandwidth-optimal TwoStage above. */
    public static final long NVLINK_ONE_STAGE_UP_TO = 512L * 1024;
    /** The default split on PCIe with full P2P: OneStage below, the PCIe-aware Ring above. */
    public static final long PCIE_ONE_STAGE_UP_TO = 64L * 1024;

    /** Messages of up to {@code upToBytes} bytes (and more than the previous row's bound) use {@code algorithm}. */
    public record Row(long upToBytes, Algorithm algorithm) {
        @JsonCreator
        public Row(@JsonProperty("upToBytes") long upToBytes, @JsonProperty("algorithm") Algorithm algorithm) {
            if (algorithm == null) {
                throw new IllegalArgumentException("row up to " + upToBytes + " bytes: algorithm is missing");
            }
            if (upToBytes < 1) {
                throw new IllegalArgumentException("row up to " + upToBytes + " bytes: upToBytes must be >= 1");
            }
            this.upToBytes = upToBytes;
            this.algorithm = algorithm;
        }
    }

    @JsonCreator
    public AlgorithmTable(
            @JsonProperty("worldSize") int worldSize,
            @JsonProperty("source") String source,
            @JsonProperty("rows") List<Row> rows) {
        if (worldSize < 1 || worldSize > BufferLayout.MAX_RANKS) {
            throw new IllegalArgumentException(
                    "algorithm table: worldSize must be 1.." + BufferLayout.MAX_RANKS + ", got " + worldSize);
        }
        if (rows == null || rows.isEmpty()) {
            throw new IllegalArgumentException("algorithm table: at least one row is required");
        }
        List<Row> sorted = new ArrayList<>(rows);
        sorted.sort(Comparator.comparingLong(Row::upToBytes));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).upToBytes() == sorted.get(i - 1).upToBytes()) {
                throw new IllegalArgumentException(
                        "algorithm table: two rows end at " + sorted.get(i).upToBytes() + " bytes");
            }
        }
        this.worldSize = worldSize;
        this.source = source == null ? "" : source;
        this.rows = List.copyOf(sorted);
    }

    /** A table that uses one algorithm for every size up to {@code maxMessageBytes}. */
    public static AlgorithmTable single(int worldSize, Algorithm algorithm, long maxMessageBytes) {
        return new AlgorithmTable(worldSize, "single " + algorithm, List.of(new Row(maxMessageBytes, algorithm)));
    }

    /**
     * The untuned default, the one source of it (the operator's planner and the runtime both take it from here):
     * world size 2 uses OneStage throughout (TwoStage and Ring save nothing for two ranks); on NVLink OneStage up to
     * 512 KiB, TwoStage above (reduce-scatter + all-gather over the full mesh); on PCIe with full P2P OneStage up to
     * 64 KiB, above it every GPU reading N−1 peers saturates the root complex and the link between NUMA islands, so the
     * Ring (each GPU pushes only to its right neighbour) wins. Ends at {@code maxMessageBytes}.
     */
    public static AlgorithmTable defaults(boolean nvlink, int worldSize, long maxMessageBytes) {
        if (worldSize <= 2) {
            return single(worldSize, Algorithm.OneStage, maxMessageBytes).withSource("default");
        }
        List<Row> rows = nvlink
                ? List.of(
                        new Row(NVLINK_ONE_STAGE_UP_TO, Algorithm.OneStage),
                        new Row(Long.MAX_VALUE, Algorithm.TwoStage))
                : List.of(new Row(PCIE_ONE_STAGE_UP_TO, Algorithm.OneStage), new Row(Long.MAX_VALUE, Algorithm.Ring));
        return new AlgorithmTable(worldSize, "default", rows).clip(maxMessageBytes);
    }

    /** {@link #defaults(boolean, int, long)} for NVLink: the runtime's choice when the operator passed no table. */
    public static AlgorithmTable defaults(int worldSize, long maxMessageBytes) {
        return defaults(true, worldSize, maxMessageBytes);
    }

    /** This table with another source. */
    public AlgorithmTable withSource(String s) {
        return new AlgorithmTable(worldSize, s, rows);
    }

    /**
     * This table ending at exactly {@code maxMessageBytes}: rows below it are kept, the row that covers it ends there,
     * and when every row ends below it the last algorithm continues up to it.
     */
    public AlgorithmTable clip(long maxMessageBytes) {
        List<Row> out = new ArrayList<>();
        for (Row r : rows) {
            if (r.upToBytes() >= maxMessageBytes) {
                out.add(new Row(maxMessageBytes, r.algorithm()));
                return new AlgorithmTable(worldSize, source, out);
            }
            out.add(r);
        }
        Row last = out.remove(out.size() - 1);
        out.add(new Row(maxMessageBytes, last.algorithm()));
        return new AlgorithmTable(worldSize, source, out);
    }

    /** Largest message size (inclusive) the table covers. */
    public long maxMessageBytes() {
        return rows.get(rows.size() - 1).upToBytes();
    }

    /** Whether {@code bytes} falls into a row. */
    public boolean covers(long bytes) {
        return bytes >= 1 && bytes <= maxMessageBytes();
    }

    /** The algorithm for a message of {@code bytes} bytes per rank: the first row whose bound is at least that. */
    public Algorithm select(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("message size must be >= 1 byte, got " + bytes);
        }
        if (bytes > maxMessageBytes()) {
            throw new IllegalArgumentException("message of " + bytes
                    + " bytes is beyond the algorithm table (covers up to " + maxMessageBytes() + " bytes)");
        }
        int lo = 0;
        int hi = rows.size() - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (rows.get(mid).upToBytes() >= bytes) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return rows.get(lo).algorithm();
    }

    /**
     * The table from measured points: {@code best[i]} is the fastest algorithm at {@code sizes[i]} (strictly
     * ascending) and holds up to the geometric midpoint to the next size; neighbours with the same algorithm merge; the
     * last one holds up to {@code maxMessageBytes}.
     */
    public static AlgorithmTable fromMeasuredPoints(
            int worldSize, String source, long[] sizes, Algorithm[] best, long maxMessageBytes) {
        if (sizes.length == 0 || sizes.length != best.length) {
            throw new IllegalArgumentException(
                    "need one best algorithm per measured size, got " + sizes.length + " sizes and " + best.length);
        }
        for (int i = 1; i < sizes.length; i++) {
            if (sizes[i] <= sizes[i - 1]) {
                throw new IllegalArgumentException("measured sizes must be strictly ascending");
            }
        }
        List<Row> out = new ArrayList<>();
        long previous = 0;
        for (int i = 0; i < sizes.length; i++) {
            long upTo = i + 1 < sizes.length ? (long) Math.sqrt((double) sizes[i] * sizes[i + 1]) - 1 : maxMessageBytes;
            upTo = Math.max(upTo, previous + 1);
            if (!out.isEmpty() && out.get(out.size() - 1).algorithm() == best[i]) {
                out.remove(out.size() - 1);
            }
            out.add(new Row(upTo, best[i]));
            previous = upTo;
        }
        return new AlgorithmTable(worldSize, source, out);
    }

    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialize algorithm table", e);
        }
    }

    public static AlgorithmTable fromJson(String json) {
        try {
            return JSON.readValue(json, AlgorithmTable.class);
        } catch (JsonProcessingException e) {
            Throwable cause = e.getCause() instanceof IllegalArgumentException ? e.getCause() : e;
            throw new IllegalArgumentException("invalid algorithm table JSON: " + cause.getMessage(), e);
        }
    }

    public void save(Path file) throws IOException {
        Files.writeString(file, toJson());
    }

    public static AlgorithmTable load(Path file) throws IOException {
        return fromJson(Files.readString(file));
    }
}
