package io.tensorlane.runtime.sched;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A small writer of the Prometheus text exposition format 0.0.4: families with HELP and TYPE, label values escaped.
 * Names are written as given (colons included), which is the point of having it.
 */
final class PromText {
    private final StringBuilder out = new StringBuilder(4096);

    /** Starts a family. */
    PromText family(String name, String type, String help) {
        out.append("# HELP ")
                .append(name)
                .append(' ')
                .append(help.replace("\\", "\\\\").replace("\n", "\\n"))
                .append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        return this;
    }

    /** One sample line. */
    PromText sample(String name, Map<String, String> labels, double value) {
        out.append(name);
        if (!labels.isEmpty()) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, String> e : labels.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                out.append(e.getKey())
                        .append("=\"")
                        .append(escape(e.getValue()))
                        .append('"');
            }
            out.append('}');
        }
        out.append(' ').append(number(value)).append('\n');
        return this;
    }

    /** The sample lines of a histogram: cumulative {@code _bucket}s with {@code le}, then {@code _count} and {@code _sum}. */
    PromText histogram(String name, Map<String, String> labels, Histogram.Snapshot h) {
        long cum = 0;
        for (int i = 0; i <= h.bounds().length; i++) {
            cum += h.counts()[i];
            Map<String, String> l = new LinkedHashMap<>(labels);
            l.put("le", i < h.bounds().length ? number(h.bounds()[i]) : "+Inf");
            sample(name + "_bucket", l, cum);
        }
        sample(name + "_count", labels, h.count());
        sample(name + "_sum", labels, h.sum());
        return this;
    }

    static String number(double v) {
        if (Double.isNaN(v)) {
            return "NaN";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        return Double.toString(v);
    }

    static String escape(String v) {
        return v.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
