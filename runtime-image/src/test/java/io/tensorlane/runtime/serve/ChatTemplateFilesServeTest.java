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
import io.tensorlane.runtime.text.ModelTokenizer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * issue #30: a model whose template is in chat_template.jinja (and a tool_use template under
 * additional_chat_templates/) chats through it, not through tokenizer_config.json's; tools (with tool_choice "none"),
 * tool_calls and tool results reach the template. The prompt the server built is read back from usage.prompt_tokens
 * (the fake executor answers whatever the prompt).
 */
class ChatTemplateFilesServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String FILE_TEMPLATE =
            "{%- for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}{% if add_generation_prompt %}A:{% endif %}";
    private static final String TOOL_TEMPLATE = "{%- for t in tools %}[{{ t.function.name }}]{% endfor %}"
            + "{%- for m in messages %}{{ m.role }}:{{ m.content }}"
            + "{%- for c in m.tool_calls %}<{{ c.function.name }} {{ c.function.arguments | tojson }}>{% endfor %}"
            + "{%- if m.tool_call_id %}#{{ m.tool_call_id }}{% endif %};{% endfor %}A:";

    private ModelTokenizer tok;
    private ModelServer server;
    private final HttpClient http =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void start(@TempDir Path dir) throws Exception {
        Path fixture = Path.of("src/test/resources/tokenizers/tiny-bpe");
        for (String f : new String[] {"tokenizer.json", "tokenizer_config.json", "generation_config.json"}) {
            Files.copy(fixture.resolve(f), dir.resolve(f));
        }
        Files.writeString(dir.resolve("chat_template.jinja"), FILE_TEMPLATE);
        Files.writeString(
                Files.createDirectories(dir.resolve("additional_chat_templates"))
                        .resolve("tool_use.jinja"),
                TOOL_TEMPLATE);
        tok = ModelTokenizer.load(dir);
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EngineMetrics metrics = new EngineMetrics(registry, "tiny", 16, 64);
        Scheduler scheduler = new Scheduler(
                new ModelServerTest.LetterExecutor(),
                new BlockAllocator(64, 16),
                new SchedulerConfig(8, 64, 4, 256, 16),
                Set.copyOf(tok.eosTokenIds()),
                metrics);
        server = ModelServer.start(
                new ModelServer.Options("tiny", "127.0.0.1", 0, 4, 4096, Duration.ofSeconds(5)),
                tok,
                scheduler,
                metrics,
                new ModelInfo("tiny", 512, 277, 1_700_000_000L),
                new PrintWriter(new StringWriter()));
    }

    @AfterEach
    void stop() {
        server.close();
        tok.close();
    }

    private JsonNode chat(String body) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/v1/chat/completions"))
                        .timeout(Duration.ofSeconds(20))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private int tokens(String prompt) {
        return tok.encode(prompt, false).length;
    }

    @Test
    void theJinjaFileWinsOverTokenizerConfig() throws Exception {
        JsonNode j = chat("{\"messages\":[{\"role\":\"user\",\"content\":\"hey\"}],\"max_tokens\":1}");
        assertThat(j.get("usage").get("prompt_tokens").asInt()).isEqualTo(tokens("user:hey;A:"));
    }

    @Test
    void toolsSelectTheToolUseTemplateAndToolHistoryReachesIt() throws Exception {
        JsonNode j = chat("""
                {"messages": [
                   {"role": "user", "content": "weather?"},
                   {"role": "assistant", "content": null, "tool_calls": [{"id": "abc123DEF", "type": "function",
                      "function": {"name": "get_weather", "arguments": "{\\"city\\":\\"Paris\\"}"}}]},
                   {"role": "tool", "tool_call_id": "abc123DEF", "content": "21"}],
                 "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}],
                 "tool_choice": "none", "max_tokens": 1}""");
        String expected =
                "[get_weather]user:weather?;assistant:<get_weather {\"city\": \"Paris\"}>;tool:21#abc123DEF;A:";
        assertThat(j.get("usage").get("prompt_tokens").asInt()).isEqualTo(tokens(expected));
        assertThat(j.get("choices").get(0).get("message").has("tool_calls"))
                .as("tool_choice none: the answer is text")
                .isFalse();
    }
}
