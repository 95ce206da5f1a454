package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.common.ExitCodes;
import io.tensorlane.runtime.loadgen.FakeOpenAiServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;

@Timeout(60)
class LoadgenCommandTest {
    record Result(int code, String out, String err) {}

    static Result run(String... args) {
        CommandLine cl = new CommandLine(new LoadgenCommand());
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        int code = cl.execute(args);
        return new Result(code, out.toString(), err.toString());
    }

    static String[] args(String... extra) {
        List<String> a = new ArrayList<>(List.of("--url", "http://127.0.0.1:9", "--model", "m"));
        a.addAll(List.of(extra));
        return a.toArray(String[]::new);
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                Arguments.of(
                        new String[] {},
                        "give either --concurrency (closed loop) or --request-rate (open loop), not both or neither"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--request-rate", "2"},
                        "give either --concurrency (closed loop) or --request-rate"),
                Arguments.of(
                        new String[] {"--concurrency", "1,x"},
                        "--concurrency takes integers separated by commas, not '1,x'"),
                Arguments.of(new String[] {"--concurrency", "0,8"}, "--concurrency values must be in 1..4096, not 0"),
                Arguments.of(
                        new String[] {"--request-rate", "fast"}, "--request-rate takes numbers (requests/s) or inf"),
                Arguments.of(
                        new String[] {"--request-rate", "-1"}, "--request-rate values must be > 0 (or inf), not -1.0"),
                Arguments.of(
                        new String[] {"--request-rate", "inf", "--duration", "10s"},
                        "--request-rate inf sends everything at once"),
                Arguments.of(
                        new String[] {"--concurrency", "4", "--max-concurrency", "2"},
                        "--max-concurrency applies to --request-rate"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--endpoint", "embeddings"},
                        "--endpoint must be completions or chat, not 'embeddings'"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--endpoint", "chat", "--token-ids"},
                        "--token-ids needs --endpoint completions"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--num-requests", "0"},
                        "--num-requests must be >= 1 (or 0 with --duration), not 0"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--input-len", "0"}, "--input-len must be >= 1, not 0"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--output-len", "-3"}, "--output-len must be >= 1, not -3"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--input-len-range", "1.5"},
                        "--input-len-range must be in [0, 1), not 1.5"),
                Arguments.of(
                        new String[] {"--concurrency", "1", "--timeout", "soon"},
                        "--timeout takes a time such as 500ms, 30s, 2m or 1h, not 'soon'"),
                Arguments.of(new String[] {"--concurrency", "1", "--timeout", "0"}, "--timeout must be > 0"),
                Arguments.of(new String[] {"--concurrency", "1", "--duration", "1d"}, "--duration takes a time"),
                Arguments.of(new String[] {"--concurrency", "1", "--url", "ftp://x"}, "--url must be an http(s) URL"));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void rejectsBadOptionsWithAMessage(String[] extra, String message) {
        String[] a = args(extra);
        if (List.of(extra).contains("--url")) {
            a = Stream.concat(Stream.of("--model", "m"), Stream.of(extra)).toArray(String[]::new);
        }
        Result r = run(a);
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("error: " + message);
    }

    @Test
    void urlAndModelAreRequired() {
        Result r = run("--concurrency", "1");
        assertThat(r.code()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).contains("Missing required options", "--url", "--model");
    }

    @Test
    void parsesDurations() {
        assertThat(LoadgenCommand.parseDuration("500ms", "--t")).isEqualTo(Duration.ofMillis(500));
        assertThat(LoadgenCommand.parseDuration("30", "--t")).isEqualTo(Duration.ofSeconds(30));
        assertThat(LoadgenCommand.parseDuration("1.5s", "--t")).isEqualTo(Duration.ofMillis(1500));
        assertThat(LoadgenCommand.parseDuration("2m", "--t")).isEqualTo(Duration.ofMinutes(2));
        assertThat(LoadgenCommand.parseDuration("1h", "--t")).isEqualTo(Duration.ofHours(1));
    }

    @Test
    void runsLevelsAgainstAFakeServerAndWritesTheReports(@TempDir Path dir) throws Exception {
        try (FakeOpenAiServer fake = new FakeOpenAiServer()) {
            fake.ttftMs = 5;
            fake.itlMs = 2;
            fake.failEvery = 7;
            Path outDir = dir.resolve("out");
            Result r = run(
                    "--url",
                    fake.url().toString(),
                    "--model",
                    "tiny",
                    "--concurrency",
                    "1,4",
                    "--num-requests",
                    "8",
                    "--input-len",
                    "32",
                    "--input-len-range",
                    "0.1",
                    "--output-len",
                    "6",
                    "--token-ids",
                    "--ignore-eos",
                    "--seed",
                    "3",
                    "--timeout",
                    "10s",
                    "--warmup",
                    "1",
                    "--out-dir",
                    outDir.toString());
            assertThat(r.code()).as(r.err()).isEqualTo(ExitCodes.OK);
            assertThat(r.out()).contains("c=1: ", "c=4: ", "TTFT mean/median/p90/p99 ms", "wrote loadgen.csv");
            assertThat(fake.requests.get()).isEqualTo(1 + 16);
            List<String> csv = Files.readAllLines(outDir.resolve("loadgen.csv"), StandardCharsets.UTF_8);
            assertThat(csv).hasSize(3);
            assertThat(csv.get(1)).startsWith("c=1,1,,");
            assertThat(csv.get(2)).startsWith("c=4,4,,");
            List<String> requests = Files.readAllLines(outDir.resolve("loadgen-requests.csv"), StandardCharsets.UTF_8);
            assertThat(requests).hasSize(1 + 16);
            // requests 7 and 14 of the fake (the warmup is 1) failed: one 429, one 500
            assertThat(requests.stream().filter(l -> l.contains(",false,"))).hasSize(2);
            JsonNode json =
                    new ObjectMapper().readTree(outDir.resolve("loadgen.json").toFile());
            assertThat(json.path("levels")).hasSize(2);
            int failed = json.path("levels").get(0).path("failed").asInt()
                    + json.path("levels").get(1).path("failed").asInt();
            assertThat(failed).isEqualTo(2);
            assertThat(json.path("levels").get(1).path("tpot_ms").path("median").asDouble())
                    .isGreaterThan(0);
            DocumentBuilderFactory.newInstance()
                    .newDocumentBuilder()
                    .parse(outDir.resolve("loadgen.svg").toFile());
            assertThat(fake.bodies.get(1).path("prompt").size()).isBetween(28, 35);
        }
    }

    @Test
    void aFailedWarmupStopsTheRun(@TempDir Path dir) throws Exception {
        try (FakeOpenAiServer fake = new FakeOpenAiServer()) {
            fake.failEvery = 1;
            Result r = run(
                    "--url",
                    fake.url().toString(),
                    "--model",
                    "tiny",
                    "--concurrency",
                    "2",
                    "--out-dir",
                    dir.toString());
            assertThat(r.code()).isEqualTo(ExitCodes.RUNTIME);
            assertThat(r.err()).contains("warmup request to http://127.0.0.1:", "/v1/completions failed: HTTP 429");
            assertThat(fake.requests.get()).isEqualTo(1);
        }
    }

    @Test
    void aLevelWithoutSuccessExitsWithCheckFailed(@TempDir Path dir) throws Exception {
        try (FakeOpenAiServer fake = new FakeOpenAiServer()) {
            fake.failEvery = 1;
            Result r = run(
                    "--url",
                    fake.url().toString(),
                    "--model",
                    "tiny",
                    "--request-rate",
                    "inf",
                    "--max-concurrency",
                    "2",
                    "--num-requests",
                    "3",
                    "--warmup",
                    "0",
                    "--out-dir",
                    dir.toString());
            assertThat(r.code()).isEqualTo(ExitCodes.CHECK_FAILED);
            assertThat(r.out()).contains("rate=inf max=2: 0 ok, 3 failed");
            assertThat(Files.exists(dir.resolve("loadgen.svg"))).isTrue();
        }
    }
}
