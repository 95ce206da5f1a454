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
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepExecutor;
import io.tensorlane.runtime.sched.StepResult;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code serve}'s whole HTTP path on a CPU: the real tokenizer (byte-level BPE fixture with a chat template), the real
 * scheduler and OpenAI layer, and a fake step function whose next token is a letter fixed by the position, so every
 * answer is known in advance.
 */
class ModelServerTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int VOCAB = 277;

    /** Next token at position p (the token after the one at p): the letter 'a' + (p + 1) % 26 (byte-level ids = bytes). */
    static int next(int position) {
        return 'a' + (position + 1) % 26;
    }

    static final class LetterExecutor implements StepExecutor {
        @Override
        public StepResult step(StepBatch b, boolean wantLogits) {
            int m = b.logitTokens().length;
            int[] ids = new int[m];
            float[] logits = wantLogits ? new float[m * VOCAB] : null;
            for (int i = 0; i < m; i++) {
                ids[i] = next(b.positions()[b.logitTokens()[i]]);
                if (logits != null) {
                    // requests without a temperature sample (OpenAI's default is 1): the letter must win every draw
                    logits[i * VOCAB + 'z'] = ids[i] == 'z' ? 80f : 60f;
                    logits[i * VOCAB + ids[i]] = 80f;
                }
            }
            return new StepResult(ids, logits);
        }

        @Override
        public int vocabSize() {
            return VOCAB;
        }
    }

    private ModelTokenizer tok;
    private ModelServer server;
    private final HttpClient http = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    @BeforeEach
    void start() {
        tok = ModelTokenizer.load(Path.of("src/test/resources/tokenizers/tiny-bpe"));
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EngineMetrics metrics = new EngineMetrics(registry, "tiny", 16, 64);
        Scheduler scheduler = new Scheduler(
                new LetterExecutor(),
                new BlockAllocator(64, 16),
                new SchedulerConfig(8, 64, 4, 256, 16),
                Set.copyOf(tok.eosTokenIds()),
                metrics);
        server = ModelServer.start(
                new ModelServer.Options("tiny", "127.0.0.1", 0, 4, 4096, Duration.ofSeconds(5)),
                tok,
                scheduler,
                metrics,
                new ModelInfo("tiny", 256, VOCAB, 1_700_000_000L),
                new PrintWriter(new StringWriter()));
    }

    @AfterEach
    void stop() {
        server.close();
        tok.close();
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .timeout(Duration.ofSeconds(20))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .timeout(Duration.ofSeconds(20))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The letters the fake produces after a prompt of {@code promptTokens} tokens. */
    static String expected(int promptTokens, int n) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append((char) next(promptTokens - 1 + i));
        }
        return s.toString();
    }

    @Test
    void modelsHealthAndMetrics() throws Exception {
        JsonNode models = JSON.readTree(get("/v1/models").body());
        assertThat(models.get("object").asText()).isEqualTo("list");
        assertThat(models.get("data").get(0).get("id").asText()).isEqualTo("tiny");
        assertThat(get("/health").statusCode()).isEqualTo(200);
        assertThat(get("/health/live").statusCode()).isEqualTo(200);
        post("/v1/completions", "{\"model\":\"tiny\",\"prompt\":\"hi\",\"max_tokens\":3}");
        String metrics = get("/metrics").body();
        assertThat(metrics)
                .contains("tensorlane:num_requests_running")
                .contains("tensorlane:kv_cache_usage_perc")
                .contains("tensorlane:generation_tokens_total")
                .contains("tensorlane:time_to_first_token_seconds_bucket");
    }

    @Test
    void completionWithUsageAndLength() throws Exception {
        int prompt = tok.encode("hello", true).length;
        HttpResponse<String> r =
                post("/v1/completions", "{\"model\":\"tiny\",\"prompt\":\"hello\",\"max_tokens\":5,\"temperature\":0}");
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode j = JSON.readTree(r.body());
        assertThat(j.get("object").asText()).isEqualTo("text_completion");
        assertThat(j.get("choices").get(0).get("text").asText()).isEqualTo(expected(prompt, 5));
        assertThat(j.get("choices").get(0).get("finish_reason").asText()).isEqualTo("length");
        assertThat(j.get("usage").get("prompt_tokens").asInt()).isEqualTo(prompt);
        assertThat(j.get("usage").get("completion_tokens").asInt()).isEqualTo(5);
        assertThat(j.get("usage").get("total_tokens").asInt()).isEqualTo(prompt + 5);
    }

    @Test
    void aResentPromptReportsItsCachedTokensInUsageAndMetrics() throws Exception {
        String text = "the same long prompt, sent twice";
        int prompt = tok.encode(text, true).length;
        assertThat(prompt).isGreaterThan(16);
        String body = "{\"model\":\"tiny\",\"prompt\":\"" + text + "\",\"max_tokens\":2,\"temperature\":0}";
        JsonNode first = JSON.readTree(post("/v1/completions", body).body()).get("usage");
        JsonNode second = JSON.readTree(post("/v1/completions", body).body()).get("usage");
        assertThat(first.get("prompt_tokens_details").get("cached_tokens").asInt())
                .isZero();
        int cached = (prompt - 1) / 16 * 16;
        assertThat(second.get("prompt_tokens_details").get("cached_tokens").asInt())
                .isEqualTo(cached);
        assertThat(second.get("prompt_tokens").asInt()).isEqualTo(prompt);
        assertThat(get("/metrics").body())
                .contains("tensorlane:prefix_cache_hits_total{model_name=\"tiny\",engine=\"0\"} " + cached + ".0");
    }

    @Test
    void stopStringsCutTheText() throws Exception {
        int prompt = tok.encode("hello", true).length;
        String all = expected(prompt, 10);
        String stop = all.substring(4, 6);
        HttpResponse<String> r = post(
                "/v1/completions",
                "{\"model\":\"tiny\",\"prompt\":\"hello\",\"max_tokens\":10,\"stop\":[\"" + stop + "\"]}");
        JsonNode c = JSON.readTree(r.body()).get("choices").get(0);
        assertThat(c.get("text").asText()).isEqualTo(all.substring(0, 4));
        assertThat(c.get("finish_reason").asText()).isEqualTo("stop");
    }

    @Test
    void streamingCompletionSendsChunksUsageAndDone() throws Exception {
        int prompt = tok.encode("hello", true).length;
        HttpResponse<String> r = post(
                "/v1/completions",
                "{\"model\":\"tiny\",\"prompt\":\"hello\",\"max_tokens\":4,\"stream\":true,\"stream_options\":{\"include_usage\":true}}");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        assertThat(r.body()).endsWith("data: [DONE]\n\n");
        StringBuilder text = new StringBuilder();
        String finish = null;
        JsonNode usage = null;
        for (String event : r.body().split("\n\n")) {
            assertThat(event).startsWith("data: ");
            String data = event.substring(6);
            if (data.equals("[DONE]")) {
                continue;
            }
            JsonNode j = JSON.readTree(data);
            if (j.get("choices").isEmpty()) {
                usage = j.get("usage");
                continue;
            }
            text.append(j.get("choices").get(0).get("text").asText());
            if (!j.get("choices").get(0).get("finish_reason").isNull()) {
                finish = j.get("choices").get(0).get("finish_reason").asText();
            }
        }
        assertThat(text.toString()).isEqualTo(expected(prompt, 4));
        assertThat(finish).isEqualTo("length");
        assertThat(usage).isNotNull();
        assertThat(usage.get("completion_tokens").asInt()).isEqualTo(4);
    }

    @Test
    void chatThroughTheTemplateWithNChoicesAndLogprobs() throws Exception {
        HttpResponse<String> r = post(
                "/v1/chat/completions",
                "{\"model\":\"tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"hey\"}],"
                        + "\"max_tokens\":3,\"n\":2,\"logprobs\":true,\"top_logprobs\":2,\"temperature\":0}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode j = JSON.readTree(r.body());
        assertThat(j.get("object").asText()).isEqualTo("chat.completion");
        String rendered =
                "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhey<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
        int prompt = tok.encode(rendered, false).length;
        assertThat(j.get("choices")).hasSize(2);
        for (JsonNode c : j.get("choices")) {
            assertThat(c.get("message").get("role").asText()).isEqualTo("assistant");
            assertThat(c.get("message").get("content").asText()).isEqualTo(expected(prompt, 3));
            JsonNode lp = c.get("logprobs").get("content");
            assertThat(lp).hasSize(3);
            assertThat(lp.get(0).get("top_logprobs")).hasSize(2);
            assertThat(lp.get(0).get("logprob").asDouble())
                    .isLessThanOrEqualTo(0)
                    .isGreaterThan(-1e-3);
            assertThat(lp.get(0).get("top_logprobs").get(1).get("logprob").asDouble())
                    .isLessThan(-15);
        }
        assertThat(j.get("usage").get("prompt_tokens").asInt()).isEqualTo(prompt);
        assertThat(j.get("usage").get("completion_tokens").asInt()).isEqualTo(6);
    }

    @Test
    void clientMistakesGetOpenAiErrorsAndTheServerKeepsServing() throws Exception {
        List<Object[]> cases = new ArrayList<>();
        cases.add(new Object[] {"{not json", 400});
        cases.add(new Object[] {"{\"model\":\"other\",\"prompt\":\"x\"}", 404});
        cases.add(new Object[] {"{\"model\":\"tiny\",\"prompt\":\"x\",\"max_tokens\":1000}", 400});
        cases.add(new Object[] {"{\"model\":\"tiny\",\"prompt\":\"x\",\"temperature\":-1}", 400});
        cases.add(new Object[] {"{\"model\":\"tiny\",\"prompt\":\"x\",\"n\":0}", 400});
        cases.add(new Object[] {"{\"model\":\"tiny\",\"prompt\":\"" + "y".repeat(5000) + "\"}", 413});
        for (Object[] c : cases) {
            HttpResponse<String> r = post("/v1/completions", (String) c[0]);
            assertThat(r.statusCode()).as((String) c[0]).isEqualTo(c[1]);
            JsonNode e = JSON.readTree(r.body()).get("error");
            assertThat(e.get("message").asText()).isNotBlank();
            assertThat(e.has("type") && e.has("param") && e.has("code")).isTrue();
        }
        assertThat(post("/v1/completions", "{\"model\":\"tiny\",\"prompt\":\"x\",\"max_tokens\":2}")
                        .statusCode())
                .isEqualTo(200);
    }

    @Test
    void drainingAnswers503AndHealthGoesUnready() throws Exception {
        assertThat(server.drain(Duration.ofSeconds(5))).isTrue();
        HttpResponse<String> r = post("/v1/completions", "{\"model\":\"tiny\",\"prompt\":\"x\",\"max_tokens\":2}");
        assertThat(r.statusCode()).isEqualTo(503);
        assertThat(r.headers().firstValue("retry-after")).isPresent();
        assertThat(get("/health").statusCode()).isEqualTo(503);
        assertThat(get("/health/live").statusCode()).isEqualTo(200);
    }
}
