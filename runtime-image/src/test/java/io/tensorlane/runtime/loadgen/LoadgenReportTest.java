package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

class LoadgenReportTest {
    static RequestRecord ok(String level, int i, double ttft, double e2e, int out) {
        return new RequestRecord(
                level, i, i * 10.0, 64, out, out, true, 200, null, ttft, e2e, new double[] {5, 7}, out);
    }

    static List<LevelSummary> levels() {
        LevelSummary a = LevelSummary.of(
                LoadgenConfig.Level.closed(1), List.of(ok("c=1", 0, 20, 100, 9), ok("c=1", 1, 30, 110, 9)), 0.25);
        LevelSummary b = LevelSummary.of(
                LoadgenConfig.Level.closed(8),
                List.of(
                        ok("c=8", 0, 40, 200, 9),
                        RequestRecord.failed("c=8", 1, 3, 64, 9, 500, "HTTP 500: \"boom\", again", 4)),
                0.5);
        LevelSummary empty = LevelSummary.of(
                LoadgenConfig.Level.closed(32),
                List.of(RequestRecord.failed("c=32", 0, 0, 64, 9, 0, "refused", 1)),
                0.1);
        return List.of(a, b, empty);
    }

    static List<String> splitCsv(String line) {
        // enough for the fields written here: quoted fields with doubled quotes
        List<String> out = new java.util.ArrayList<>();
        StringBuilder f = new StringBuilder();
        boolean q = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (q) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    f.append('"');
                    i++;
                } else if (c == '"') {
                    q = false;
                } else {
                    f.append(c);
                }
            } else if (c == '"') {
                q = true;
            } else if (c == ',') {
                out.add(f.toString());
                f.setLength(0);
            } else {
                f.append(c);
            }
        }
        out.add(f.toString());
        return out;
    }

    @Test
    void levelCsvHasOneRowPerLevelWithTheDocumentedColumns() {
        String[] lines = LoadgenReport.levelCsv(levels()).split("\n");
        assertThat(lines).hasSize(4);
        List<String> header = splitCsv(lines[0]);
        assertThat(header)
                .startsWith(
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
                        "total_token_throughput",
                        "ttft_mean_ms",
                        "ttft_median_ms",
                        "ttft_p90_ms",
                        "ttft_p99_ms",
                        "tpot_mean_ms");
        assertThat(header)
                .endsWith("e2e_p99_ms", "cached_tokens", "prefix_cache_hit_rate")
                .hasSize(11 + 16 + 2);
        for (int i = 1; i < lines.length; i++) {
            assertThat(splitCsv(lines[i])).hasSameSizeAs(header);
        }
        List<String> c1 = splitCsv(lines[1]);
        assertThat(c1.get(header.indexOf("level"))).isEqualTo("c=1");
        assertThat(c1.get(header.indexOf("concurrency"))).isEqualTo("1");
        assertThat(c1.get(header.indexOf("request_rate"))).isEmpty();
        assertThat(c1.get(header.indexOf("completed"))).isEqualTo("2");
        assertThat(c1.get(header.indexOf("request_throughput"))).isEqualTo("8.000");
        assertThat(c1.get(header.indexOf("output_token_throughput"))).isEqualTo("72.000");
        assertThat(c1.get(header.indexOf("total_token_throughput"))).isEqualTo("584.000");
        assertThat(c1.get(header.indexOf("ttft_median_ms"))).isEqualTo("25.000");
        assertThat(c1.get(header.indexOf("tpot_mean_ms"))).isEqualTo("10.000");
        List<String> c32 = splitCsv(lines[3]);
        assertThat(c32.get(header.indexOf("failed"))).isEqualTo("1");
        assertThat(c32.get(header.indexOf("ttft_mean_ms"))).isEmpty();
    }

    @Test
    void requestCsvQuotesErrors() {
        List<RequestRecord> records = List.of(
                ok("c=1", 0, 20, 100, 9),
                RequestRecord.failed("c=8", 1, 3, 64, 9, 500, "HTTP 500: \"boom\", again", 4));
        String[] lines = LoadgenReport.requestCsv(records).split("\n");
        List<String> header = splitCsv(lines[0]);
        assertThat(header)
                .containsExactly(
                        "level",
                        "index",
                        "start_ms",
                        "input_tokens",
                        "max_tokens",
                        "output_tokens",
                        "success",
                        "status",
                        "ttft_ms",
                        "tpot_ms",
                        "e2e_ms",
                        "itl_mean_ms",
                        "itl_max_ms",
                        "content_chunks",
                        "error");
        List<String> okRow = splitCsv(lines[1]);
        assertThat(okRow).hasSameSizeAs(header);
        assertThat(okRow.get(header.indexOf("tpot_ms"))).isEqualTo("10.000");
        assertThat(okRow.get(header.indexOf("itl_max_ms"))).isEqualTo("7.000");
        assertThat(okRow.get(header.indexOf("error"))).isEmpty();
        List<String> bad = splitCsv(lines[2]);
        assertThat(bad).hasSameSizeAs(header);
        assertThat(bad.get(header.indexOf("success"))).isEqualTo("false");
        assertThat(bad.get(header.indexOf("status"))).isEqualTo("500");
        assertThat(bad.get(header.indexOf("error"))).isEqualTo("HTTP 500: \"boom\", again");
    }

    @Test
    void svgIsWellFormedXmlWithBothPanels() throws Exception {
        String svg = LoadgenReport.svg(levels(), "model <a&b>");
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        Document d = f.newDocumentBuilder().parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        assertThat(d.getDocumentElement().getLocalName()).isEqualTo("svg");
        assertThat(d.getElementsByTagName("polyline").getLength()).isEqualTo(2);
        assertThat(svg)
                .contains("output tokens/s", "median TPOT (ms)", "concurrency (clients)", "model &lt;a&amp;b&gt;");
        // three throughput points (the level without successes at 0 tok/s), two TPOT points (none for that level)
        assertThat(d.getElementsByTagName("circle").getLength()).isEqualTo(5);
    }

    @Test
    void svgOfAnOpenLoopRunAndOfNothingParses() throws Exception {
        LevelSummary open = LevelSummary.of(
                LoadgenConfig.Level.open(Double.POSITIVE_INFINITY, 4), List.of(ok("rate=inf max=4", 0, 1, 5, 3)), 1);
        for (List<LevelSummary> l : List.of(List.of(open), List.<LevelSummary>of())) {
            String svg = LoadgenReport.svg(l, "t");
            DocumentBuilderFactory.newInstance()
                    .newDocumentBuilder()
                    .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        }
        assertThat(LoadgenReport.svg(List.of(open), "t")).contains("request rate (req/s)", ">inf max=4<");
    }

    @Test
    void jsonSummaryAndTable() throws Exception {
        LoadgenConfig c = new LoadgenConfig(
                URI.create("http://127.0.0.1:8080"),
                "llama",
                Endpoint.CHAT,
                List.of(1, 8, 32),
                List.of(),
                0,
                2,
                null,
                64,
                0.1,
                9,
                0,
                false,
                32000,
                true,
                5,
                Duration.ofSeconds(30),
                1,
                Path.of("out"));
        JsonNode root = new ObjectMapper().readTree(LoadgenReport.json(c, levels()));
        assertThat(root.path("config").path("endpoint").asText()).isEqualTo("chat");
        assertThat(root.path("config").path("mode").asText()).isEqualTo("closed-loop");
        assertThat(root.path("levels")).hasSize(3);
        JsonNode l0 = root.path("levels").get(0);
        assertThat(l0.path("output_token_throughput").asDouble()).isEqualTo(72.0);
        assertThat(l0.path("ttft_ms").path("median").asDouble()).isEqualTo(25.0);
        assertThat(l0.path("itl_ms").path("samples").asInt()).isEqualTo(4);
        assertThat(l0.path("request_rate").isNull()).isTrue();
        assertThat(root.path("levels").get(2).path("ttft_ms").path("mean").isNull())
                .isTrue();
        assertThat(root.path("levels").get(2).path("first_error").asText()).isEqualTo("refused");

        String table = LoadgenReport.table(levels());
        assertThat(table.split("\n")[0]).contains("level", "out tok/s", "TTFT mean/median/p90/p99 ms");
        assertThat(table).contains("c=1", "c=8", "c=32", "72.0", "25.0", "c=8: 1 failed, first: HTTP 500");
    }

    @Test
    void niceAxisTops() {
        assertThat(LoadgenReport.niceCeil(7)).isEqualTo(10);
        assertThat(LoadgenReport.niceCeil(180)).isEqualTo(200);
        assertThat(LoadgenReport.niceCeil(2400)).isEqualTo(2500);
        assertThat(LoadgenReport.niceCeil(0.3)).isCloseTo(0.5, org.assertj.core.api.Assertions.within(1e-12));
    }
}
