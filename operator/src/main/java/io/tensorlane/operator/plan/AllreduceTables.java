package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import java.util.ArrayList;
import java.util.List;

/**
 * Default message-size → algorithm tables per topology class, used when the node has no (recent, matching)
 * preflight measurement. Rows are {@code (upToBytes inclusive, algorithm)}; {@code Long.MAX_VALUE} means "the rest,
 * up to maxMessageBytes". A measured table from {@code GpuTopology.status.measurement.algorithmTable} replaces these.
 */
public final class AllreduceTables {
  private static final long REST = Long.MAX_VALUE;

  /**
   * NVLink, more than 2 GPUs: OneStage is latency-bound and wins for small messages; above 512 KiB the
   * bandwidth-optimal TwoStage (reduce-scatter + all-gather over the full mesh) wins.
   */
  public static final List<Row> NVLINK = List.of(new Row(512 * Units.KiB, Algorithm.OneStage), new Row(REST, Algorithm.TwoStage));

  /** Two GPUs on any interconnect: OneStage throughout (TwoStage and Ring save nothing for two ranks). */
  public static final List<Row> PAIR = List.of(new Row(REST, Algorithm.OneStage));

  /**
   * PCIe with full P2P, more than 2 GPUs: OneStage (every rank reads all peers) up to 64 KiB where latency
   * dominates; above, every GPU reading N−1 peers saturates the root complex and the CPU link between NUMA
   * islands, so the PCIe-aware Ring (each GPU pushes only to its right neighbour) wins.
   */
  public static final List<Row> PCIE = List.of(new Row(64 * Units.KiB, Algorithm.OneStage), new Row(REST, Algorithm.Ring));

  /** One row of a default table. */
  public record Row(long upToBytes, Algorithm algorithm) {
  }

  private AllreduceTables() {
  }

  /** The default table for an NVLink or PCIe node at this world size. */
  public static List<Row> defaults(boolean nvlink, int worldSize) {
    if (worldSize <= 2) {
      return PAIR;
    }
    return nvlink ? NVLINK : PCIE;
  }

  /** Clips rows to {@code maxMessageBytes}: rows below it are kept, the row covering it ends exactly there. */
  public static List<AlgorithmRange> clip(List<Row> rows, long maxMessageBytes) {
    List<AlgorithmRange> out = new ArrayList<>();
    for (Row r : rows) {
      if (r.upToBytes() < maxMessageBytes) {
        out.add(new AlgorithmRange(r.upToBytes(), r.algorithm().name()));
      } else {
        out.add(new AlgorithmRange(maxMessageBytes, r.algorithm().name()));
        return out;
      }
    }
    if (!out.isEmpty()) {
      // the rows end below maxMessageBytes: the last algorithm continues up to it
      AlgorithmRange last = out.remove(out.size() - 1);
      out.add(new AlgorithmRange(maxMessageBytes, last.algorithm));
    }
    return out;
  }

  /** Rows of a measured status table (upToBytes inclusive); custom algorithms only, ascending. */
  public static List<Row> fromStatus(List<AlgorithmRange> measured) {
    List<Row> rows = new ArrayList<>();
    for (AlgorithmRange r : measured) {
      if (r == null || r.upToBytes == null || r.algorithm == null) {
        throw new IllegalArgumentException("measured algorithm table has an incomplete row");
      }
      Algorithm a = Algorithm.parse(r.algorithm);
      if (!a.isCustom()) {
        // a measured NCCL range: the custom allreduce stops below it
        break;
      }
      if (!rows.isEmpty() && rows.get(rows.size() - 1).upToBytes() >= r.upToBytes) {
        throw new IllegalArgumentException("measured algorithm table is not ascending at " + r.upToBytes + " bytes");
      }
      rows.add(new Row(r.upToBytes, a));
    }
    if (rows.isEmpty()) {
      throw new IllegalArgumentException("measured algorithm table has no custom-kernel row");
    }
    return rows;
  }

  /**
   * The engine's form of a status table (half-open ranges from 1 byte, see {@link AlgorithmTable}); the renderer
   * passes it to the Tensorlane runtime as JSON.
   */
  public static AlgorithmTable toKernelTable(int worldSize, String source, List<AlgorithmRange> table) {
    List<AlgorithmTable.Range> ranges = new ArrayList<>();
    long start = 1;
    for (AlgorithmRange r : table) {
      ranges.add(new AlgorithmTable.Range(start, r.upToBytes + 1, Algorithm.parse(r.algorithm)));
      start = r.upToBytes + 1;
    }
    return new AlgorithmTable(worldSize, source, ranges);
  }

  /** "OneStage ≤ 64 KiB, Ring above" (the last row's bound is maxMessageBytes and is said separately). */
  public static String describe(List<AlgorithmRange> table) {
    if (table.size() == 1) {
      return table.get(0).algorithm;
    }
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < table.size() - 1; i++) {
      sb.append(table.get(i).algorithm).append(" ≤ ").append(Units.bytes(table.get(i).upToBytes)).append(", ");
    }
    return sb.append(table.get(table.size() - 1).algorithm).append(" above").toString();
  }
}
