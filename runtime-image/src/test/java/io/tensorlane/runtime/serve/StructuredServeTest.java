package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * issue #30 items 2-3 over HTTP: response_format and forced tool calls become token masks that reach the step
 * function; the scripted executor honours them as the GPU sampler does, so an answer scripted off the grammar comes out
 * parsing and matching the schema (or as the forced call), and an answer on the grammar comes out unchanged.
 */
class StructuredServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCHEMA = "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, "
            + "\"n\": {\"type\": \"integer\"}, \"unit\": {\"enum\": [\"C\", \"F\"]}}, \"required\": [\"city\", \"n\", \"unit\"],"
            + " \"additionalProperties\": false}";
    private static final String TOOLS =
            "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
                    + "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": "
                    + "[\"city\"]}}}, {\"type\": \"function\", \"function\": {\"name\": \"get_time\"}}]";

    private ModelTokenizer tok;
    private ModelServer server;
    private ScriptExecutor executor;
    private ScriptedServer fixture;

    @BeforeEach
    void start() {
        fixture = new ScriptedServer("hermes");
        tok = fixture.tok;
        executor = fixture.executor;
        server = fixture.server;
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    private HttpResponse<String> post(String path, String script, String body) throws Exception {
        executor.script(tok.encode(script, false));
        return fixture.post(path, body);
    }

    private JsonNode chat(String script, String extra) throws Exception {
        HttpResponse<String> r = post(
                "/v1/chat/completions",
                script,
                "{\"messages\": [{\"role\": \"user\", \"content\": \"weather?\"}], \"max_tokens\": 300" + extra + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body()).get("choices").get(0);
    }

    private static String format(String schema) {
        return ", \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"w\", \"schema\": "
                + schema + ", \"strict\": true}}";
    }

    private static void assertMatchesSchema(JsonNode v) {
        assertThat(v.isObject()).isTrue();
        assertThat(v.get("city").isTextual()).as("%s", v).isTrue();
        assertThat(v.get("n").isIntegralNumber()).as("%s", v).isTrue();
        assertThat(v.get("unit").asText()).isIn("C", "F");
        assertThat(v.size()).isEqualTo(3);
    }

    @Test
    void anAnswerOnTheSchemaPassesUnchanged() throws Exception {
        String answer = "{\"city\": \"Oslo\", \"n\": 12, \"unit\": \"C\"}";
        JsonNode c = chat(answer, format(SCHEMA));
        assertThat(c.get("message").get("content").asText()).isEqualTo(answer);
        assertThat(c.get("finish_reason").asText()).isEqualTo("stop");
    }

    @Test
    void anAnswerOffTheSchemaIsHeldToIt() throws Exception {
        for (String script : List.of(
                "Sure! Here it is: {\"city\": \"Oslo\"}",
                "{\"city\": 12, \"n\": \"twelve\", \"unit\": \"K\", \"extra\": true}",
                "{\"city\": \"Oslo\", \"n\": 1.5, \"unit\": \"C\"} and more text")) {
            JsonNode c = chat(script, format(SCHEMA));
            assertThat(c.get("finish_reason").asText()).as(script).isEqualTo("stop");
            assertMatchesSchema(JSON.readTree(c.get("message").get("content").asText()));
        }
    }

    @Test
    void jsonObjectGivesAnObjectAndCompletionsTakeItToo() throws Exception {
        JsonNode c = chat("hello there", ", \"response_format\": {\"type\": \"json_object\"}");
        assertThat(JSON.readTree(c.get("message").get("content").asText()).isObject())
                .isTrue();
        HttpResponse<String> r = post(
                "/v1/completions",
                "[1, 2]",
                "{\"prompt\": \"x\", \"max_tokens\": 100, " + format(SCHEMA).substring(2) + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertMatchesSchema(JSON.readTree(
                JSON.readTree(r.body()).get("choices").get(0).get("text").asText()));
    }

    @Test
    void streamedStructuredAnswersParse() throws Exception {
        HttpResponse<String> r = post(
                "/v1/chat/completions",
                "nope",
                "{\"messages\": [{\"role\": \"user\", \"content\": \"w\"}], \"stream\": true, \"max_tokens\": 300"
                        + format(SCHEMA) + "}");
        StringBuilder text = new StringBuilder();
        for (String event : r.body().split("\n\n")) {
            String data = event.substring("data: ".length());
            if (data.equals("[DONE]")) continue;
            text.append(JSON.readTree(data)
                    .get("choices")
                    .get(0)
                    .get("delta")
                    .path("content")
                    .asText(""));
        }
        assertMatchesSchema(JSON.readTree(text.toString()));
    }

    @Test
    void requiredAndNamedToolChoicesAreCalls() throws Exception {
        JsonNode req = chat("I cannot call tools.", ", " + TOOLS + ", \"tool_choice\": \"required\"");
        assertThat(req.get("finish_reason").asText()).isEqualTo("tool_calls");
        JsonNode call = req.get("message").get("tool_calls").get(0);
        assertThat(call.get("function").get("name").asText()).isIn("get_weather", "get_time");
        assertThat(JSON.readTree(call.get("function").get("arguments").asText()).isObject())
                .isTrue();

        JsonNode named = chat(
                "no",
                ", " + TOOLS
                        + ", \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}");
        assertThat(named.get("message").get("tool_calls")).hasSize(1);
        JsonNode w = named.get("message").get("tool_calls").get(0).get("function");
        assertThat(w.get("name").asText()).isEqualTo("get_weather");
        assertThat(JSON.readTree(w.get("arguments").asText()).get("city").isTextual())
                .isTrue();

        String good = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}\n</tool_call>";
        JsonNode kept = chat(good, ", " + TOOLS + ", \"tool_choice\": \"required\"");
        assertThat(kept.get("message")
                        .get("tool_calls")
                        .get(0)
                        .get("function")
                        .get("arguments")
                        .asText())
                .isEqualTo("{\"city\": \"Rome\"}");
    }

    @Test
    void schemasThatCannotBeEnforcedAre400() throws Exception {
        HttpResponse<String> r = post(
                "/v1/chat/completions",
                "x",
                "{\"messages\": [{\"role\": \"user\", \"content\": \"w\"}]"
                        + format(
                                "{\"type\": \"object\", \"properties\": {\"d\": {\"type\": \"string\", \"format\": \"date\"}}}")
                        + "}");
        assertThat(r.statusCode()).isEqualTo(400);
        JsonNode e = JSON.readTree(r.body()).get("error");
        assertThat(e.get("param").asText()).isEqualTo("response_format.json_schema.schema.properties.d");
        assertThat(e.get("message").asText()).contains("'format' is not supported");
        HttpResponse<String> t = post(
                "/v1/chat/completions",
                "x",
                "{\"messages\": [{\"role\": \"user\", \"content\": \"w\"}], \"tools\": [{\"type\": \"function\", "
                        + "\"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"string\", \"pattern\": \"a\"}}}], "
                        + "\"tool_choice\": \"required\"}");
        assertThat(t.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(t.body()).get("error").get("param").asText())
                .isEqualTo("tools[0].function.parameters");
    }
}
