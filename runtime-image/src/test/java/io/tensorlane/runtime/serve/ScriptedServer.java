package io.tensorlane.runtime.serve;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tensorlane.runtime.openai.ModelInfo;
import io.tensorlane.runtime.sched.BlockAllocator;
import io.tensorlane.runtime.sched.EngineMetrics;
import io.tensorlane.runtime.sched.Scheduler;
import io.tensorlane.runtime.sched.SchedulerConfig;
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

/**
 * The real HTTP server over a {@link ScriptExecutor} (a scripted step function) and the tiny BPE tokenizer of the test
 * resources: what the tests of the OpenAI surface (tools, structured outputs, penalties) share.
 */
final class ScriptedServer implements AutoCloseable {
    final ModelTokenizer tok;
    final ScriptExecutor executor;
    final ModelServer server;
    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    /** @param toolParser the server's tool-call parser (hermes, llama3_json, mistral) */
    ScriptedServer(String toolParser) {
        tok = ModelTokenizer.load(Path.of("src/test/resources/tokenizers/tiny-bpe"));
        executor = new ScriptExecutor(277, tok.eosTokenIds().get(0));
        EngineMetrics metrics =
                new EngineMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), "tiny", 16, 64);
        Scheduler scheduler = new Scheduler(
                executor,
                new BlockAllocator(64, 16),
                new SchedulerConfig(8, 512, 4, 1024, 64),
                Set.copyOf(tok.eosTokenIds()),
                metrics);
        server = ModelServer.start(
                new ModelServer.Options("tiny", "127.0.0.1", 0, 4, 1 << 20, Duration.ofSeconds(5), true, toolParser),
                tok,
                scheduler,
                metrics,
                new ModelInfo("tiny", 1024, 277, 1_700_000_000L),
                new PrintWriter(new StringWriter()));
    }

    /** POSTs {@code body} (JSON) to {@code path} and waits for the whole answer. */
    HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                        .timeout(Duration.ofSeconds(20))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Override
    public void close() {
        server.close();
        tok.close();
    }
}
