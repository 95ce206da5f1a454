package io.tensorlane.runtime.cli;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** Pure: bench rows → CSV, SVG plot and the tuned algorithm table. */
public final class BenchReport {
    /** One measured (algorithm, mode, size). {@code kernelGBs} is NaN for NCCL and copies. */
    public record Row(
            String algorithm,
            String mode,
            int world,
            String dtype,
            long bytes,
            double medianUs,
            double minUs,
            double maxUs,
            double algBwGBs,
            double busBwGBs,
            double kernelGBs,
            int samples) {
        /** The same measurement under another mode name (e.g. {@code graph-push}: OneStage's push variant). */
        public Row withMode(String m) {
            return new Row(
                    algorithm, m, world, dtype, bytes, medianUs, minUs, maxUs, algBwGBs, busBwGBs, kernelGBs, samples);
        }
    }

    /** A size keeps the previous size's algorithm when that one is at most this much slower than the fastest. */
    public static final double HYSTERESIS = 0.03;

    private BenchReport() {}

    public static String csv(List<Row> rows) {
        StringBuilder b = new StringBuilder(
                "algorithm,mode,world,dtype,bytes,median_us,min_us,max_us,algbw_GBps,busbw_GBps,kernel_GBps,samples\n");
        for (Row r : rows) {
            b.append(String.format(
                    Locale.ROOT,
                    "%s,%s,%d,%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%d%n",
                    r.algorithm(),
                    r.mode(),
                    r.world(),
                    r.dtype(),
                    r.bytes(),
                    r.medianUs(),
                    r.minUs(),
                    r.maxUs(),
                    r.algBwGBs(),
                    r.busBwGBs(),
                    r.kernelGBs(),
                    r.samples()));
        }
        return b.toString();
    }

    /**
     * The tuned table: per measured size the custom algorithm with the lowest median (graph-replayed where measured,
     * else eager), or NCCL when it ran with the same world size and was faster.
     */
    public static AlgorithmTable tune(List<Row> rows, int world, long maxBytes, String source) {
        Map<Long, Map<String, Double>> best = new TreeMap<>();
        for (Row r : rows) {
            if (r.world() != world || r.algorithm().equals("copy")) {
                continue;
            }
            boolean custom = !r.algorithm().equals("NCCL");
            boolean graphMeasured = rows.stream()
                    .anyMatch(o -> o.bytes() == r.bytes()
                            && o.mode().equals("graph")
                            && !o.algorithm().equals("NCCL"));
            if (custom && graphMeasured && !r.mode().equals("graph")) {
                continue;
            }
            best.computeIfAbsent(r.bytes(), k -> new LinkedHashMap<>()).merge(r.algorithm(), r.medianUs(), Math::min);
        }
        List<Long> sizes = new ArrayList<>();
        List<Algorithm> algos = new ArrayList<>();
        String previous = null;
        for (Map.Entry<Long, Map<String, Double>> e : best.entrySet()) {
            if (e.getKey() > maxBytes) {
                continue;
            }
            Map.Entry<String, Double> fastest = e.getValue().entrySet().stream()
                    .min(Map.Entry.comparingByValue())
                    .orElseThrow();
            String a = fastest.getKey();
            // Hysteresis: keep the previous size's algorithm while it is within HYSTERESIS of the fastest, so that
            // timing noise does not make the table flip back and forth.
            Double prevTime = previous == null ? null : e.getValue().get(previous);
            if (prevTime != null && prevTime <= fastest.getValue() * (1 + HYSTERESIS)) {
                a = previous;
            }
            previous = a;
            sizes.add(e.getKey());
            algos.add(Algorithm.parse(a));
        }
        if (sizes.isEmpty()) {
            throw new IllegalArgumentException("no measurement for world size " + world + " to tune from");
        }
        return AlgorithmTable.fromMeasuredPoints(
                world,
                source,
                sizes.stream().mapToLong(Long::longValue).toArray(),
                algos.toArray(Algorithm[]::new),
                maxBytes);
    }

    /** Latency (median µs) against message size, log-log, one line per algorithm and mode. */
    public static String svg(List<Row> rows, String title) {
        int w = 900;
        int h = 560;
        int left = 80;
        int right = 220;
        int top = 50;
        int bottom = 60;
        double minX = rows.stream().mapToLong(Row::bytes).min().orElse(1);
        double maxX = rows.stream().mapToLong(Row::bytes).max().orElse(2);
        double minY = rows.stream()
                .mapToDouble(Row::medianUs)
                .filter(v -> v > 0)
                .min()
                .orElse(1);
        double maxY = rows.stream().mapToDouble(Row::medianUs).max().orElse(10);
        double lx0 = Math.log10(minX);
        double lx1 = Math.max(Math.log10(maxX), lx0 + 1);
        double ly0 = Math.floor(Math.log10(minY));
        double ly1 = Math.max(Math.ceil(Math.log10(maxY)), ly0 + 1);
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n",
                w,
                h));
        b.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", w, h));
        b.append(String.format(
                Locale.ROOT, "<text x=\"%d\" y=\"25\" font-size=\"15\">%s</text>%n", left, escape(title)));
        int pw = w - left - right;
        int ph = h - top - bottom;
        for (double e = ly0; e <= ly1; e++) {
            double y = top + ph - (e - ly0) / (ly1 - ly0) * ph;
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>",
                    left,
                    y,
                    left + pw,
                    y));
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s µs</text>%n",
                    left - 6,
                    y + 4,
                    fmt(Math.pow(10, e))));
        }
        for (double e = Math.ceil(lx0 / Math.log10(2)); e * Math.log10(2) <= lx1; e += 2) {
            double lx = e * Math.log10(2);
            double x = left + (lx - lx0) / (lx1 - lx0) * pw;
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>",
                    x,
                    top,
                    x,
                    top + ph));
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    x,
                    top + ph + 18,
                    escape(Args.human((long) Math.pow(2, e)))));
        }
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size per rank</text>%n",
                left + pw / 2,
                h - 15));
        String[] colors = {
            "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#17becf"
        };
        Map<String, List<Row>> series = new LinkedHashMap<>();
        rows.stream()
                .filter(r -> !r.algorithm().equals("copy"))
                .forEach(r -> series.computeIfAbsent(
                                r.algorithm() + " " + r.mode() + " (" + r.world() + " ranks)", k -> new ArrayList<>())
                        .add(r));
        int i = 0;
        for (Map.Entry<String, List<Row>> s : series.entrySet()) {
            String c = colors[i % colors.length];
            StringBuilder pts = new StringBuilder();
            s.getValue().stream()
                    .sorted((x, y) -> Long.compare(x.bytes(), y.bytes()))
                    .forEach(r -> {
                        double x = left + (Math.log10(r.bytes()) - lx0) / (lx1 - lx0) * pw;
                        double y = top + ph - (Math.log10(Math.max(r.medianUs(), 1e-3)) - ly0) / (ly1 - ly0) * ph;
                        pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
                    });
            b.append(String.format(
                    Locale.ROOT,
                    "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"%s\"/>%n",
                    c,
                    s.getKey().contains("eager") ? " stroke-dasharray=\"6,3\"" : "",
                    pts.toString().trim()));
            int ly = top + 10 + i * 18;
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>",
                    left + pw + 10,
                    ly,
                    left + pw + 30,
                    ly,
                    c));
            b.append(String.format(
                    Locale.ROOT, "<text x=\"%d\" y=\"%d\">%s</text>%n", left + pw + 35, ly + 4, escape(s.getKey())));
            i++;
        }
        b.append("</svg>\n");
        return b.toString();
    }

    private static String fmt(double v) {
        return v >= 1 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2g", v);
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
