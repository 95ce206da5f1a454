package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorlane.runtime.openai.ModelInfo;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.EngineMetrics;
import io.tensorlane.runtime.sched.Scheduler;
import io.tensorlane.runtime.sched.SchedulerConfig;
import io.tensorlane.runtime.sched.SpeculativeConfig;
import io.tensorlane.runtime.sched.Speculator;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code serve} with speculative decoding over {@link ModelServerTest.LetterExecutor} (the alphabet again and again, so
 * prompt lookup guesses right once it has come round): the same text as without it, the spec_decode counters, and a
 * request's {@code "speculative": false}.
 */
class SpeculativeServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private ModelTokenizer tok;
    private ModelServer server;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @BeforeEach
    void start() {
        tok = ModelTokenizer.load(Path.of("src/test/resources/tokenizers/tiny-bpe"));
        EngineMetrics metrics =
                new EngineMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "tiny", 16, 64);
        SpeculativeConfig sc = SpeculativeConfig.parse("ngram:k=4,n=3", "test");
        Scheduler scheduler = new Scheduler(
                new ModelServerTest.LetterExecutor(),
                new BlockAllocator(64, 16),
                new SchedulerConfig(8, 64, 4, 256, 16),
                Set.copyOf(tok.eosTokenIds()),
                metrics,
                Speculator.of(sc, sc.logitRows(8), 8, metrics));
        server = ModelServer.start(
                new ModelServer.Options("tiny", "127.0.0.1", 0, 4, 4096, Duration.ofSeconds(5)),
                tok,
                scheduler,
                metrics,
                new ModelInfo("tiny", 256, 277, 1_700_000_000L),
                new PrintWriter(new StringWriter()));
    }

    @AfterEach
    void stop() {
        server.close();
        tok.close();
    }

    private String send(String method, String path, String body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(20));
        if (body != null) {
            b.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    private long counter(String name) throws Exception {
        Matcher m = Pattern.compile("(?m)^tensorlane:" + name + "\\{[^}]*\\} ([0-9.]+)$")
                .matcher(send("GET", "/metrics", null));
        assertThat(m.find()).as(name).isTrue();
        return (long) Double.parseDouble(m.group(1));
    }

    @Test
    void theTextIsTheSameWithSpeculationAndARequestMayOptOut() throws Exception {
        String req = "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":60,\"temperature\":0";
        long before = counter("generation_tokens_total"); // the server's warm-up token
        JsonNode fast = JSON.readTree(send("POST", "/v1/completions", req + "}"));
        int prompt = fast.get("usage").get("prompt_tokens").asInt();
        assertThat(fast.get("choices").get(0).get("text").asText()).isEqualTo(ModelServerTest.expected(prompt, 60));
        assertThat(fast.get("usage").get("completion_tokens").asInt()).isEqualTo(60);
        long drafts = counter("spec_decode_num_drafts_total");
        long accepted = counter("spec_decode_num_accepted_tokens_total");
        assertThat(drafts).isPositive();
        assertThat(accepted).isGreaterThan(20); // after the first 26 letters, every guess is right
        assertThat(counter("generation_tokens_total") - before).isEqualTo(60);

        JsonNode plain = JSON.readTree(send("POST", "/v1/completions", req + ",\"speculative\":false}"));
        assertThat(plain.get("choices").get(0).get("text").asText()).isEqualTo(ModelServerTest.expected(prompt, 60));
        assertThat(counter("spec_decode_num_drafts_total")).isEqualTo(drafts);
        assertThat(counter("generation_tokens_total") - before).isEqualTo(120);
    }
}
