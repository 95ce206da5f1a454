package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import java.util.ArrayList;
import java.util.List;

/**
 * The algorithm table between its API form ({@link AlgorithmRange} rows of {@code status.allreduce.table} and of a
 * preflight measurement) and its one shape everywhere else ({@link AlgorithmTable}: the same rows, typed). The
 * defaults per topology class are {@link AlgorithmTable#defaults(boolean, int, long)}; a recent measured table from
 * {@code GpuTopology.status.measurement.algorithmTable} replaces them.
 */
public final class AllreduceTables {
    private AllreduceTables() {}

    /** The API rows of {@code table}. */
    public static List<AlgorithmRange> toStatus(AlgorithmTable table) {
        return table.rows().stream()
                .map(r -> new AlgorithmRange(r.upToBytes(), r.algorithm().name()))
                .toList();
    }

    /**
     * A measured status table as a table of the custom algorithms: its rows up to the first NCCL row (the custom
     * allreduce stops below it).
     *
     * @throws IllegalArgumentException for an incomplete or unordered row, an unknown algorithm or no custom row
     */
    public static AlgorithmTable fromMeasurement(int worldSize, List<AlgorithmRange> measured) {
        List<AlgorithmTable.Row> rows = new ArrayList<>();
        for (AlgorithmRange r : measured) {
            if (r == null || r.upToBytes == null || r.algorithm == null) {
                throw new IllegalArgumentException("measured algorithm table has an incomplete row");
            }
            Algorithm a = Algorithm.parse(r.algorithm);
            if (!a.isCustom()) {
                break;
            }
            if (!rows.isEmpty() && rows.get(rows.size() - 1).upToBytes() >= r.upToBytes) {
                throw new IllegalArgumentException(
                        "measured algorithm table is not ascending at " + r.upToBytes + " bytes");
            }
            rows.add(new AlgorithmTable.Row(r.upToBytes, a));
        }
        if (rows.isEmpty()) {
            throw new IllegalArgumentException("measured algorithm table has no custom-kernel row");
        }
        return new AlgorithmTable(worldSize, "preflight", rows);
    }

    /** The runtime's table ({@code TENSORLANE_ALGORITHM_TABLE}) for a status table. */
    public static AlgorithmTable toKernelTable(int worldSize, String source, List<AlgorithmRange> table) {
        return new AlgorithmTable(
                worldSize,
                source,
                table.stream()
                        .map(r -> new AlgorithmTable.Row(r.upToBytes, Algorithm.parse(r.algorithm)))
                        .toList());
    }

    /** "OneStage ≤ 64 KiB, Ring above" (the last row's bound is maxMessageBytes and is said separately). */
    public static String describe(List<AlgorithmRange> table) {
        if (table.size() == 1) {
            return table.get(0).algorithm;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < table.size() - 1; i++) {
            sb.append(table.get(i).algorithm)
                    .append(" ≤ ")
                    .append(Units.bytes(table.get(i).upToBytes))
                    .append(", ");
        }
        return sb.append(table.get(table.size() - 1).algorithm).append(" above").toString();
    }
}
