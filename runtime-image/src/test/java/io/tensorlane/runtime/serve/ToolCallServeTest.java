package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * issue #30 item 2 over the real HTTP server: a scripted model answer (a fake step function) parsed into tool calls,
 * whole and streamed, for each parser. Streams are put together as the official openai client's stream helpers do
 * ({@code accumulate_delta}: strings appended, {@code index} and {@code type} replaced, lists of objects merged by
 * index), so a chunk that repeated an id or a name would show here as a wrong call.
 */
class ToolCallServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOOLS =
            "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
                    + "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}},"
                    + "{\"type\": \"function\", \"function\": {\"name\": \"get_time\"}}]";

    private ModelTokenizer tok;
    private ModelServer server;
    private ScriptExecutor executor;
    private ScriptedServer fixture;

    private void start(String parser) {
        fixture = new ScriptedServer(parser);
        tok = fixture.tok;
        executor = fixture.executor;
        server = fixture.server;
    }

    @AfterEach
    void stop() {
        if (fixture != null) fixture.close();
    }

    private HttpResponse<String> post(String body) throws Exception {
        return fixture.post("/v1/chat/completions", body);
    }

    private JsonNode answer(String script, String extra) throws Exception {
        executor.script(tok.encode(script, false));
        HttpResponse<String> r = post("{\"messages\": [{\"role\": \"user\", \"content\": \"weather?\"}], " + TOOLS
                + ", \"max_tokens\": 400" + extra + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body()).get("choices").get(0);
    }

    /** The chunks of a streamed answer (data lines up to [DONE]). */
    private List<JsonNode> chunks(String script, String extra) throws Exception {
        executor.script(tok.encode(script, false));
        HttpResponse<String> r = post("{\"messages\": [{\"role\": \"user\", \"content\": \"weather?\"}], " + TOOLS
                + ", \"max_tokens\": 400, \"stream\": true" + extra + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.body()).endsWith("data: [DONE]\n\n");
        List<JsonNode> out = new ArrayList<>();
        for (String event : r.body().split("\n\n")) {
            String data = event.substring("data: ".length());
            if (!data.equals("[DONE]")) out.add(JSON.readTree(data));
        }
        return out;
    }

    /** openai-python's accumulate_delta over the choice deltas of a stream. */
    static ObjectNode accumulate(List<JsonNode> chunks) {
        ObjectNode acc = JSON.createObjectNode();
        for (JsonNode c : chunks) {
            for (JsonNode choice : c.get("choices")) {
                merge(acc, (ObjectNode) choice.get("delta"));
                if (!choice.get("finish_reason").isNull())
                    acc.put("finish_reason", choice.get("finish_reason").asText());
            }
        }
        return acc;
    }

    private static void merge(ObjectNode acc, ObjectNode delta) {
        for (Iterator<Map.Entry<String, JsonNode>> it = delta.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String k = e.getKey();
            JsonNode v = e.getValue();
            JsonNode have = acc.get(k);
            if (have == null || have.isNull()) {
                acc.set(k, v.deepCopy());
            } else if (have.isTextual() && v.isTextual()) {
                acc.put(k, k.equals("index") || k.equals("type") ? v.asText() : have.asText() + v.asText());
            } else if (have.isObject() && v.isObject()) {
                merge((ObjectNode) have, (ObjectNode) v);
            } else if (have.isArray() && v.isArray()) {
                for (JsonNode item : v) {
                    ArrayNode list = (ArrayNode) have;
                    int index = item.get("index").asInt();
                    JsonNode target = null;
                    for (JsonNode h : list) if (h.get("index").asInt() == index) target = h;
                    if (target == null) list.add(item.deepCopy());
                    else merge((ObjectNode) target, (ObjectNode) item);
                }
            } else if (!k.equals("index")) {
                acc.set(k, v.deepCopy());
            }
        }
    }

    private static void assertCall(JsonNode call, String name, String arguments) {
        assertThat(call.get("id").asText()).startsWith("call_").hasSize(29);
        assertThat(call.get("type").asText()).isEqualTo("function");
        assertThat(call.get("function").get("name").asText()).isEqualTo(name);
        assertThat(call.get("function").get("arguments").asText()).isEqualTo(arguments);
    }

    private static final String HERMES_TWO = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
            + "{\"city\":\"Paris\",\"days\":[1,2]}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", "
            + "\"arguments\": {}}\n</tool_call>";

    @Test
    void hermesCallsInTheWholeResponse() throws Exception {
        start("hermes");
        JsonNode c = answer(HERMES_TWO, "");
        assertThat(c.get("finish_reason").asText()).isEqualTo("tool_calls");
        JsonNode m = c.get("message");
        assertThat(m.get("content").asText()).isEqualTo("Let me check.\n\n");
        assertThat(m.get("tool_calls")).hasSize(2);
        assertCall(m.get("tool_calls").get(0), "get_weather", "{\"city\": \"Paris\", \"days\": [1, 2]}");
        assertCall(m.get("tool_calls").get(1), "get_time", "{}");
        assertThat(m.get("tool_calls").get(0).get("id"))
                .isNotEqualTo(m.get("tool_calls").get(1).get("id"));

        JsonNode only = answer(HERMES_TWO.substring(HERMES_TWO.indexOf("<tool_call>")), "");
        assertThat(only.get("message").get("content").isNull())
                .as("content null next to calls")
                .isTrue();

        JsonNode one = answer(HERMES_TWO, ", \"parallel_tool_calls\": false");
        assertThat(one.get("message").get("tool_calls")).hasSize(1);
    }

    @Test
    void hermesCallsStreamedInPieces() throws Exception {
        start("hermes");
        List<JsonNode> chunks = chunks(HERMES_TWO, "");
        ObjectNode acc = accumulate(chunks);
        assertThat(acc.get("content").asText()).isEqualTo("Let me check.\n\n");
        assertThat(acc.get("finish_reason").asText()).isEqualTo("tool_calls");
        JsonNode calls = acc.get("tool_calls");
        assertThat(calls).hasSize(2);
        assertCall(calls.get(0), "get_weather", "{\"city\": \"Paris\", \"days\": [1, 2]}");
        assertCall(calls.get(1), "get_time", "{}");
        int firstCall = -1;
        int argumentPieces = 0;
        int lastContent = -1;
        for (int i = 0; i < chunks.size(); i++) {
            JsonNode d = chunks.get(i).get("choices").get(0).get("delta");
            if (d.has("content") && !d.get("content").asText().isEmpty()) lastContent = i;
            if (!d.has("tool_calls")) continue;
            if (firstCall < 0) firstCall = i;
            for (JsonNode p : d.get("tool_calls")) {
                if (p.get("index").asInt() == 0 && !p.has("id")) argumentPieces++;
            }
        }
        assertThat(firstCall).as("a call streams").isPositive();
        assertThat(chunks.get(1)
                        .get("choices")
                        .get(0)
                        .get("delta")
                        .get("content")
                        .asText())
                .as("text before the call streams as content at once")
                .isNotEmpty();
        assertThat(argumentPieces).as("the first call's arguments in pieces").isGreaterThan(3);
        assertThat(lastContent)
                .as("the text between calls comes with the finish")
                .isGreaterThan(firstCall);
    }

    @Test
    void llamaJsonParallelCalls() throws Exception {
        start("llama3_json");
        String script = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}; "
                + "{\"name\": \"get_time\", \"parameters\": {\"tz\": \"CET\"}}";
        JsonNode c = answer(script, "");
        assertThat(c.get("message").get("content").isNull()).isTrue();
        assertCall(c.get("message").get("tool_calls").get(0), "get_weather", "{\"city\": \"Oslo\"}");
        assertCall(c.get("message").get("tool_calls").get(1), "get_time", "{\"tz\": \"CET\"}");
        ObjectNode acc = accumulate(chunks(script, ""));
        assertThat(acc.get("tool_calls")).hasSize(2);
        assertCall(acc.get("tool_calls").get(1), "get_time", "{\"tz\": \"CET\"}");
        assertThat(acc.path("content").asText("")).isEmpty();
    }

    @Test
    void mistralCallsStreamed() throws Exception {
        start("mistral");
        String script = "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Rome\"}}]";
        ObjectNode acc = accumulate(chunks(script, ""));
        assertThat(acc.get("finish_reason").asText()).isEqualTo("tool_calls");
        JsonNode call = acc.get("tool_calls").get(0);
        assertThat(call.get("id").asText()).hasSize(9).matches("[A-Za-z0-9]+");
        assertThat(call.get("function").get("arguments").asText()).isEqualTo("{\"city\": \"Rome\"}");
    }

    @Test
    void malformedCallsStayText() throws Exception {
        start("hermes");
        String bad = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {city: Paris}}\n</tool_call>";
        JsonNode c = answer(bad, "");
        assertThat(c.get("finish_reason").asText()).isEqualTo("stop");
        assertThat(c.get("message").get("content").asText()).isEqualTo(bad);
        assertThat(c.get("message").has("tool_calls")).isFalse();
        // streamed, the call opened at its name: its pieces stay, the answer follows as text and ends as "stop"
        ObjectNode acc = accumulate(chunks(bad, ""));
        assertThat(acc.get("content").asText()).isEqualTo(bad);
        assertThat(acc.get("finish_reason").asText()).isEqualTo("stop");
        String cut = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par";
        JsonNode c2 = answer(cut, "");
        assertThat(c2.get("message").get("content").asText()).isEqualTo(cut);
        assertThat(accumulate(chunks(cut, "")).get("finish_reason").asText()).isEqualTo("stop");
    }

    @Test
    void toolChoiceNoneLeavesTheAnswerText() throws Exception {
        start("hermes");
        JsonNode c = answer(HERMES_TWO, ", \"tool_choice\": \"none\"");
        assertThat(c.get("message").get("content").asText()).isEqualTo(HERMES_TWO);
        assertThat(c.get("finish_reason").asText()).isEqualTo("stop");
    }

    @Test
    void noParserForTheModelIsA400() throws Exception {
        start(null); // the tiny model's template names no tool-call format
        executor.script(tok.encode("x", false));
        HttpResponse<String> r = post("{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], " + TOOLS + "}");
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).get("error").get("message").asText()).contains("--tool-call-parser");
        HttpResponse<String> none = post("{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], " + TOOLS
                + ", \"tool_choice\": \"none\"," + " \"max_tokens\": 1}");
        assertThat(none.statusCode()).as(none.body()).isEqualTo(200);
    }
}
