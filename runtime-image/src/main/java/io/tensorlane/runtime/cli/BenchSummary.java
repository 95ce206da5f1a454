package io.tensorlane.runtime.cli;

import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.runtime.cli.BenchReport.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** Pure: the short table printed last (the performance items). */
public final class BenchSummary {
    private BenchSummary() {}

    /** One line of the latency table: {@code label}, then the median at 16 B, 8 KiB, 42 KiB and 256 KiB (or "-"). */
    private static String latencyRow(List<Row> rows, String label, String algorithm, String mode) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "  %-36s", label));
        for (long s : new long[] {16, 8192, 43008, 262144}) {
            b.append(find(rows, algorithm, mode, s)
                    .map(r -> String.format(Locale.ROOT, "%10.2f", r.medianUs()))
                    .orElse("         -"));
        }
        return b.toString();
    }

    static Optional<Row> find(List<Row> rows, String algo, String mode, long bytes) {
        return rows.stream()
                .filter(r -> r.algorithm().equals(algo) && r.mode().equals(mode) && r.bytes() == bytes)
                .findFirst();
    }

    public static List<String> lines(
            List<Row> rows,
            int world,
            String gpu,
            int driver,
            boolean virtual,
            List<String> notes,
            AlgorithmTable tuned) {
        List<String> out = new ArrayList<>();
        out.add("==== summary: " + gpu + ", CUDA driver " + driver + ", " + world + " ranks"
                + (virtual ? " (virtual, one GPU)" : ""));
        double ceiling = rows.stream()
                .filter(r -> r.algorithm().equals("copy"))
                .mapToDouble(Row::kernelGBs)
                .max()
                .orElse(Double.NaN);
        rows.stream()
                .filter(r -> r.algorithm().equals("copy"))
                .forEach(r -> out.add(String.format(
                        Locale.ROOT,
                        "copy ceiling  %-12s %8.1f GB/s (bytes read + written)",
                        r.mode(),
                        r.kernelGBs())));
        long largest = rows.stream()
                .filter(r -> !r.algorithm().equals("copy") && !r.algorithm().equals("NCCL"))
                .mapToLong(Row::bytes)
                .max()
                .orElse(0);
        Optional<Row> ncclLargest = find(rows, "NCCL", "eager", largest).filter(r -> r.world() == world);
        for (String a : List.of("OneStage", "TwoStage", "Ring")) {
            find(rows, a, "eager", largest)
                    .ifPresent(r -> out.add(
                            virtual
                                    ? String.format(
                                            Locale.ROOT,
                                            "%-8s %s/rank: %9.1f us, kernel traffic %8.1f GB/s = %5.1f%% of copy ceiling, busbw %7.1f GB/s",
                                            a,
                                            Args.human(largest),
                                            r.medianUs(),
                                            r.kernelGBs(),
                                            100 * r.kernelGBs() / ceiling,
                                            r.busBwGBs())
                                    : String.format(
                                            Locale.ROOT,
                                            "%-8s %s/rank: %9.1f us, busbw %7.1f GB/s%s",
                                            a,
                                            Args.human(largest),
                                            r.medianUs(),
                                            r.busBwGBs(),
                                            ncclLargest
                                                    .map(n -> String.format(
                                                            Locale.ROOT,
                                                            " = %.0f%% of NCCL's %.1f GB/s",
                                                            100 * r.busBwGBs() / n.busBwGBs(),
                                                            n.busBwGBs()))
                                                    .orElse(""))));
        }
        if (!virtual) {
            out.add(
                    "  (real ranks: the traffic crosses the GPU interconnect, so the local copy ceiling does not bound it)");
        }
        out.add("graph-replayed latency (us, median):   16 B (barrier floor)     8 KiB    42 KiB   256 KiB");
        for (String a : List.of("OneStage", "TwoStage", "Ring")) {
            out.add(latencyRow(rows, a, a, "graph"));
        }
        if (rows.stream().anyMatch(r -> r.mode().equals("graph-push"))) {
            out.add(latencyRow(rows, "OneStage push variant", "OneStage", "graph-push"));
        }
        out.add(latencyRow(rows, "NCCL (eager, own rank count)", "NCCL", "eager"));
        StringBuilder t = new StringBuilder("tuned table:");
        tuned.rows()
                .forEach(r -> t.append(" <=")
                        .append(Args.human(r.upToBytes()))
                        .append('=')
                        .append(r.algorithm()));
        out.add(t.toString());
        notes.forEach(x -> out.add("note: " + x));
        return out;
    }
}
