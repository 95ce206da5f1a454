package io.tensorlane.runtime.loadgen;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Pure: level summaries and records → text table, CSV, JSON and an SVG plot. */
public final class LoadgenReport {
    static final String[] METRICS = {"ttft", "tpot", "itl", "e2e"};
    static final String[] STATS = {"mean", "median", "p90", "p99"};

    private LoadgenReport() {}

    private static Stats.Dist dist(LevelSummary s, String metric) {
        return switch (metric) {
            case "ttft" -> s.ttft();
            case "tpot" -> s.tpot();
            case "itl" -> s.itl();
            default -> s.e2e();
        };
    }

    private static double stat(Stats.Dist d, String stat) {
        return switch (stat) {
            case "mean" -> d.mean();
            case "median" -> d.median();
            case "p90" -> d.p90();
            default -> d.p99();
        };
    }

    /** The per-level CSV header (one row per level follows). */
    public static List<String> levelColumns() {
        List<String> c = new ArrayList<>(List.of(
                "level",
                "concurrency",
                "request_rate",
                "completed",
                "failed",
                "duration_s",
                "input_tokens",
                "output_tokens",
                "request_throughput",
                "output_token_throughput",
                "total_token_throughput"));
        for (String m : METRICS) {
            for (String s : STATS) {
                c.add(m + "_" + s + "_ms");
            }
        }
        c.add("cached_tokens");
        c.add("prefix_cache_hit_rate");
        return c;
    }

    public static String levelCsv(List<LevelSummary> levels) {
        StringBuilder b = new StringBuilder(String.join(",", levelColumns())).append('\n');
        for (LevelSummary s : levels) {
            List<String> v = new ArrayList<>(List.of(
                    csvField(s.label()),
                    Integer.toString(s.concurrency()),
                    num(s.requestRate()),
                    Integer.toString(s.completed()),
                    Integer.toString(s.failed()),
                    num(s.durationS()),
                    Long.toString(s.inputTokens()),
                    Long.toString(s.outputTokens()),
                    num(s.requestThroughput()),
                    num(s.outputThroughput()),
                    num(s.totalTokenThroughput())));
            for (String m : METRICS) {
                for (String st : STATS) {
                    v.add(num(stat(dist(s, m), st)));
                }
            }
            v.add(Long.toString(s.cachedTokens()));
            v.add(num(s.cacheHitRate()));
            b.append(String.join(",", v)).append('\n');
        }
        return b.toString();
    }

    public static final String REQUEST_COLUMNS =
            "level,index,start_ms,input_tokens,max_tokens,output_tokens,success,status,ttft_ms,tpot_ms,"
                    + "e2e_ms,itl_mean_ms,itl_max_ms,content_chunks,error";

    public static String requestCsv(List<RequestRecord> records) {
        StringBuilder b = new StringBuilder(REQUEST_COLUMNS).append('\n');
        for (RequestRecord r : records) {
            Stats.Dist itl = Stats.of(r.itlMs());
            double max = java.util.Arrays.stream(r.itlMs()).max().orElse(Double.NaN);
            b.append(String.join(
                            ",",
                            csvField(r.level()),
                            Integer.toString(r.index()),
                            num(r.startMs()),
                            Integer.toString(r.inputTokens()),
                            Integer.toString(r.maxTokens()),
                            Integer.toString(r.outputTokens()),
                            Boolean.toString(r.success()),
                            Integer.toString(r.status()),
                            num(r.ttftMs()),
                            num(r.tpotMs()),
                            num(r.e2eMs()),
                            num(itl.mean()),
                            num(max),
                            Integer.toString(r.contentChunks()),
                            csvField(r.error() == null ? "" : r.error())))
                    .append('\n');
        }
        return b.toString();
    }

    /** The summary printed after a run: one row per level. */
    public static String table(List<LevelSummary> levels) {
        StringBuilder b = new StringBuilder();
        String head = "%-18s %6s %6s %8s %8s %9s %9s | %-31s | %-31s | %-31s | %-31s%n";
        String sub = "mean/median/p90/p99 ms";
        b.append(String.format(
                Locale.ROOT,
                head,
                "level",
                "ok",
                "failed",
                "time s",
                "req/s",
                "out tok/s",
                "tot tok/s",
                "TTFT " + sub,
                "TPOT " + sub,
                "ITL " + sub,
                "E2E " + sub));
        for (LevelSummary s : levels) {
            b.append(String.format(
                    Locale.ROOT,
                    head,
                    s.label(),
                    s.completed(),
                    s.failed(),
                    fixed(s.durationS(), 2),
                    fixed(s.requestThroughput(), 2),
                    fixed(s.outputThroughput(), 1),
                    fixed(s.totalTokenThroughput(), 1),
                    quad(s.ttft()),
                    quad(s.tpot()),
                    quad(s.itl()),
                    quad(s.e2e())));
        }
        for (LevelSummary s : levels) {
            if (!Double.isNaN(s.cacheHitRate())) {
                b.append(String.format(
                        Locale.ROOT,
                        "%s: prefix cache hit rate %.1f%% (%d cached prompt tokens)%n",
                        s.label(),
                        100 * s.cacheHitRate(),
                        s.cachedTokens()));
            }
        }
        for (LevelSummary s : levels) {
            if (s.firstError() != null) {
                b.append(String.format(
                        Locale.ROOT, "%s: %d failed, first: %s%n", s.label(), s.failed(), s.firstError()));
            }
        }
        return b.toString();
    }

    /** The JSON summary: the run's settings and one object per level. */
    public static String json(LoadgenConfig c, List<LevelSummary> levels) {
        Map<String, Object> root = new LinkedHashMap<>();
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("url", c.baseUrl().toString());
        cfg.put("model", c.model());
        cfg.put("endpoint", c.endpoint().label());
        cfg.put("mode", c.openLoop() ? "open-loop" : "closed-loop");
        cfg.put("num_requests", c.numRequests());
        cfg.put("duration_s", c.duration() == null ? null : c.duration().toMillis() / 1000.0);
        cfg.put("input_len", c.inputLen());
        cfg.put("input_len_range", c.inputLenRange());
        cfg.put("output_len", c.outputLen());
        cfg.put("output_len_range", c.outputLenRange());
        cfg.put("token_ids", c.tokenIds());
        cfg.put("ignore_eos", c.ignoreEos());
        cfg.put("seed", c.seed());
        cfg.put("timeout_s", c.timeout().toMillis() / 1000.0);
        cfg.put("workload", c.prefix().mode().label());
        cfg.put("system_prompt_len", c.prefix().systemPromptLen());
        cfg.put("turns", c.prefix().turns());
        root.put("config", cfg);
        List<Map<String, Object>> ls = new ArrayList<>();
        for (LevelSummary s : levels) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("level", s.label());
            m.put("concurrency", s.concurrency());
            m.put("request_rate", jsonNum(s.requestRate()));
            m.put("completed", s.completed());
            m.put("failed", s.failed());
            m.put("duration_s", jsonNum(s.durationS()));
            m.put("input_tokens", s.inputTokens());
            m.put("output_tokens", s.outputTokens());
            m.put("request_throughput", jsonNum(s.requestThroughput()));
            m.put("output_token_throughput", jsonNum(s.outputThroughput()));
            m.put("total_token_throughput", jsonNum(s.totalTokenThroughput()));
            for (String metric : METRICS) {
                Map<String, Object> d = new LinkedHashMap<>();
                for (String st : STATS) {
                    d.put(st, jsonNum(stat(dist(s, metric), st)));
                }
                d.put("samples", dist(s, metric).count());
                m.put(metric + "_ms", d);
            }
            m.put("cached_tokens", s.cachedTokens());
            m.put("prefix_cache_hit_rate", jsonNum(s.cacheHitRate()));
            m.put("first_error", s.firstError());
            ls.add(m);
        }
        root.put("levels", ls);
        try {
            return new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(root) + "\n";
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Output-token throughput (top) and median TPOT (bottom) against the levels, evenly spaced in run order. */
    public static String svg(List<LevelSummary> levels, String title) {
        int w = 760;
        int left = 90;
        int right = 30;
        int panel = 220;
        int gap = 70;
        int top = 50;
        int h = top + 2 * panel + gap + 60;
        int pw = w - left - right;
        StringBuilder b = new StringBuilder();
        b.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">%n",
                w,
                h));
        b.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", w, h));
        b.append(String.format(
                Locale.ROOT, "<text x=\"%d\" y=\"25\" font-size=\"15\">%s</text>%n", left, escape(title)));
        panel(b, levels, LevelSummary::outputThroughput, "output tokens/s", "#1f77b4", left, top, pw, panel);
        panel(b, levels, s -> s.tpot().median(), "median TPOT (ms)", "#d62728", left, top + panel + gap, pw, panel);
        boolean open = levels.stream().anyMatch(s -> !Double.isNaN(s.requestRate()));
        b.append(String.format(
                Locale.ROOT,
                "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                left + pw / 2,
                h - 12,
                open ? "request rate (req/s)" : "concurrency (clients)"));
        b.append("</svg>\n");
        return b.toString();
    }

    private static void panel(
            StringBuilder b,
            List<LevelSummary> levels,
            java.util.function.ToDoubleFunction<LevelSummary> f,
            String name,
            String color,
            int left,
            int top,
            int pw,
            int ph) {
        double max =
                levels.stream().mapToDouble(f).filter(Double::isFinite).max().orElse(1);
        double yMax = niceCeil(max > 0 ? max : 1);
        b.append(String.format(
                Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n", left, top - 8, escape(name)));
        for (int i = 0; i <= 4; i++) {
            double y = top + ph - i / 4.0 * ph;
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>",
                    left,
                    y,
                    left + pw,
                    y));
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n",
                    left - 6,
                    y + 4,
                    tick(yMax * i / 4)));
        }
        int n = levels.size();
        StringBuilder pts = new StringBuilder();
        for (int i = 0; i < n; i++) {
            LevelSummary s = levels.get(i);
            double x = left + (n == 1 ? pw / 2.0 : 20 + i * (pw - 40.0) / (n - 1));
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                    x,
                    top + ph + 16,
                    escape(xLabel(s))));
            double v = f.applyAsDouble(s);
            if (!Double.isFinite(v)) {
                continue;
            }
            double y = top + ph - v / yMax * ph;
            pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
            b.append(String.format(
                    Locale.ROOT,
                    "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"><title>%s: %s</title></circle>%n",
                    x,
                    y,
                    color,
                    escape(s.label()),
                    tick(v)));
        }
        if (pts.length() > 0) {
            b.append(String.format(
                    Locale.ROOT,
                    "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>%n",
                    color,
                    pts.toString().trim()));
        }
    }

    private static String xLabel(LevelSummary s) {
        if (Double.isNaN(s.requestRate())) {
            return Integer.toString(s.concurrency());
        }
        return s.label().substring("rate=".length());
    }

    static double niceCeil(double v) {
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String tick(double v) {
        if (v == 0) {
            return "0";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.3g", v);
    }

    private static String quad(Stats.Dist d) {
        return String.join("/", fixed(d.mean(), 1), fixed(d.median(), 1), fixed(d.p90(), 1), fixed(d.p99(), 1));
    }

    private static String fixed(double v, int digits) {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%." + digits + "f", v);
    }

    /** CSV number: empty for NaN, {@code inf} for infinity, else up to 3 decimals. */
    static String num(double v) {
        if (Double.isNaN(v)) {
            return "";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    private static Object jsonNum(double v) {
        if (Double.isNaN(v)) {
            return null;
        }
        return Double.isInfinite(v) ? (v > 0 ? "inf" : "-inf") : v;
    }

    static String csvField(String s) {
        if (s.contains(",") || s.contains("\"") || s.contains("\n") || s.contains("\r")) {
            return "\"" + s.replace("\"", "\"\"") + "\"";
        }
        return s;
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
