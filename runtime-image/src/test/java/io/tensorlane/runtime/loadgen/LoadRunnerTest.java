package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The runner and the HTTP client against the fake server on loopback. Bounds are loose: the CI machine is shared. */
@Timeout(60)
class LoadRunnerTest {
    FakeOpenAiServer fake;

    @BeforeEach
    void start() throws Exception {
        fake = new FakeOpenAiServer();
    }

    @AfterEach
    void stop() {
        fake.close();
    }

    static LoadRunner.LevelResult run(LoadgenConfig c, LoadgenConfig.Level level) throws InterruptedException {
        return new LoadRunner(c, new OpenAiClient(c)).run(level, null);
    }

    @Test
    void closedLoopMeasuresTheFakesSleeps() throws Exception {
        fake.ttftMs = 60;
        fake.itlMs = 20;
        LoadgenConfig c = TestConfigs.closed(fake.url(), List.of(2), 6);
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.closed(2));
        assertThat(r.records()).hasSize(6).allSatisfy(rec -> {
            assertThat(rec.success()).as(rec.error()).isTrue();
            assertThat(rec.status()).isEqualTo(200);
            assertThat(rec.outputTokens()).isEqualTo(8);
            assertThat(rec.contentChunks()).isEqualTo(8);
            assertThat(rec.itlMs()).hasSize(7);
            assertThat(rec.ttftMs()).isBetween(55.0, 60.0 + 400);
            assertThat(rec.tpotMs()).isBetween(15.0, 20.0 + 100);
            assertThat(rec.e2eMs()).isGreaterThanOrEqualTo(55.0 + 7 * 18).isGreaterThanOrEqualTo(rec.ttftMs());
        });
        assertThat(r.records().stream().map(RequestRecord::index)).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5);
        assertThat(fake.maxInFlight.get()).isLessThanOrEqualTo(2);
        LevelSummary s = r.summary();
        assertThat(s.completed()).isEqualTo(6);
        assertThat(s.failed()).isZero();
        assertThat(s.outputTokens()).isEqualTo(48);
        assertThat(s.inputTokens()).isEqualTo(6 * 7);
        // 3 rounds of ≈ 60 + 7·20 = 200 ms each
        assertThat(s.durationS()).isBetween(0.55, 5.0);
        assertThat(s.outputThroughput()).isCloseTo(48 / s.durationS(), org.assertj.core.api.Assertions.within(1e-9));
        assertThat(s.itl().median()).isBetween(15.0, 120.0);
    }

    @Test
    void countsFailuresWithStatusAndMessage() throws Exception {
        fake.failEvery = 3;
        fake.ttftMs = 1;
        fake.itlMs = 1;
        LoadgenConfig c = TestConfigs.closed(fake.url(), List.of(3), 12);
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.closed(3));
        List<RequestRecord> failed =
                r.records().stream().filter(x -> !x.success()).toList();
        assertThat(failed).hasSize(4);
        assertThat(failed)
                .extracting(RequestRecord::status)
                .containsOnly(429, 500)
                .contains(429, 500);
        assertThat(failed).allSatisfy(x -> {
            assertThat(x.error()).startsWith("HTTP " + x.status() + ": ");
            assertThat(x.error()).containsAnyOf("too many requests", "engine exploded");
            assertThat(x.ttftMs()).isNaN();
            assertThat(x.tpotMs()).isNaN();
        });
        LevelSummary s = r.summary();
        assertThat(s.completed()).isEqualTo(8);
        assertThat(s.failed()).isEqualTo(4);
        assertThat(s.outputTokens()).isEqualTo(8 * 8);
        assertThat(s.ttft().count()).isEqualTo(8);
        assertThat(s.firstError()).startsWith("HTTP ");
    }

    @Test
    void aStalledStreamTimesOutAndTheLevelEnds() throws Exception {
        fake.ttftMs = 1;
        fake.hangMs = 10_000;
        LoadgenConfig c = TestConfigs.with(
                TestConfigs.closed(fake.url(), List.of(2), 2),
                Endpoint.COMPLETIONS,
                false,
                Duration.ofMillis(400),
                null,
                2);
        long t0 = System.nanoTime();
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.closed(2));
        assertThat((System.nanoTime() - t0) / 1e9).isLessThan(5.0);
        assertThat(r.records()).hasSize(2).allSatisfy(x -> {
            assertThat(x.success()).isFalse();
            assertThat(x.error()).isEqualTo("timed out after 400 ms");
            assertThat(x.e2eMs()).isBetween(350.0, 3000.0);
        });
    }

    @Test
    void connectionRefusedIsAFailureWithoutStatus() throws Exception {
        URI dead = fake.url();
        fake.close();
        LoadgenConfig c = TestConfigs.with(
                TestConfigs.closed(dead, List.of(1), 1), Endpoint.COMPLETIONS, false, Duration.ofSeconds(3), null, 1);
        RequestRecord r = new OpenAiClient(c).send(new Workload(c).prompt(0), "c=1", System.nanoTime());
        assertThat(r.success()).isFalse();
        assertThat(r.status()).isZero();
        assertThat(r.error()).isNotBlank();
    }

    @Test
    void openLoopRespectsMaxConcurrencyAndSendsEverything() throws Exception {
        fake.ttftMs = 40;
        fake.itlMs = 5;
        LoadgenConfig c = TestConfigs.open(fake.url(), List.of(Double.POSITIVE_INFINITY), 2, 6);
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.open(Double.POSITIVE_INFINITY, 2));
        assertThat(r.records()).hasSize(6).allMatch(RequestRecord::success);
        assertThat(fake.maxInFlight.get()).isEqualTo(2);
        assertThat(r.summary().label()).isEqualTo("rate=inf max=2");
    }

    @Test
    void openLoopPoissonArrivalsSpreadOverTime() throws Exception {
        fake.ttftMs = 1;
        fake.itlMs = 1;
        LoadgenConfig c = TestConfigs.open(fake.url(), List.of(40.0), 0, 12);
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.open(40.0, 0));
        assertThat(r.records()).hasSize(12).allMatch(RequestRecord::success);
        // 12 arrivals at 40/s: the last starts around 300 ms in (very loose)
        double lastStart = r.records().get(r.records().size() - 1).startMs();
        assertThat(lastStart).isBetween(30.0, 3000.0);
    }

    @Test
    void durationBoundsAClosedLoopWithoutARequestCount() throws Exception {
        fake.ttftMs = 5;
        fake.itlMs = 5;
        LoadgenConfig c = TestConfigs.with(
                TestConfigs.closed(fake.url(), List.of(2), 0),
                Endpoint.COMPLETIONS,
                false,
                Duration.ofSeconds(5),
                Duration.ofMillis(400),
                0);
        assertThat(c.problems()).isEmpty();
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.closed(2));
        assertThat(r.records().size()).isBetween(2, 400);
        assertThat(r.durationS()).isBetween(0.35, 3.0);
    }

    @Test
    void chatWithoutUsageCountsContentChunksAndSkipsTheRoleDelta() throws Exception {
        fake.usage = false;
        fake.ttftMs = 50;
        fake.itlMs = 5;
        LoadgenConfig c = TestConfigs.with(
                TestConfigs.closed(fake.url(), List.of(1), 2), Endpoint.CHAT, false, Duration.ofSeconds(10), null, 2);
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.closed(1));
        assertThat(r.records()).hasSize(2).allSatisfy(x -> {
            assertThat(x.success()).as(x.error()).isTrue();
            assertThat(x.outputTokens()).isEqualTo(8);
            assertThat(x.inputTokens()).isEqualTo(16); // planned length: no usage
            assertThat(x.ttftMs()).isGreaterThanOrEqualTo(45.0);
        });
        assertThat(fake.paths).containsOnly("/v1/chat/completions");
        JsonNode body = fake.bodies.get(0);
        assertThat(body.path("messages").get(0).path("role").asText()).isEqualTo("user");
        assertThat(body.path("messages").get(0).path("content").asText().split(" "))
                .hasSize(16);
    }

    @Test
    void sendsStreamingRequestsWithTokenIdsAndIgnoreEos() throws Exception {
        fake.ttftMs = 1;
        fake.itlMs = 1;
        LoadgenConfig c = TestConfigs.with(
                TestConfigs.closed(URI.create(fake.url() + "/v1/"), List.of(1), 1),
                Endpoint.COMPLETIONS,
                true,
                Duration.ofSeconds(10),
                null,
                1);
        LoadRunner.LevelResult r = run(c, LoadgenConfig.Level.closed(1));
        assertThat(r.records().get(0).success()).isTrue();
        assertThat(r.records().get(0).inputTokens()).isEqualTo(16); // from usage: the fake counts the ids
        assertThat(fake.paths).containsExactly("/v1/completions");
        JsonNode b = fake.bodies.get(0);
        assertThat(b.path("model").asText()).isEqualTo("fake");
        assertThat(b.path("prompt").isArray()).isTrue();
        assertThat(b.path("prompt").size()).isEqualTo(16);
        assertThat(b.path("max_tokens").asInt()).isEqualTo(8);
        assertThat(b.path("stream").asBoolean()).isTrue();
        assertThat(b.path("stream_options").path("include_usage").asBoolean()).isTrue();
        assertThat(b.path("ignore_eos").asBoolean()).isTrue();
    }

    @Test
    void warmupReportsTheFirstFailure() {
        fake.failEvery = 1;
        LoadgenConfig c = TestConfigs.closed(fake.url(), List.of(1), 1);
        RequestRecord r = new LoadRunner(c, new OpenAiClient(c)).warmup(2);
        assertThat(r).isNotNull();
        assertThat(r.status()).isEqualTo(429);
        assertThat(fake.requests.get()).isEqualTo(1);
    }
}
