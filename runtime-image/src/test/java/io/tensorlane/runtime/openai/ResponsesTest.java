package io.tensorlane.runtime.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Field names and types of every builder, as the openai Python client's models read them. */
class ResponsesTest {
    static final ModelInfo M = new ModelInfo("tiny", 2048, 1000, 1_700_000_000L);
    static final TokenLogprob HELLO = new TokenLogprob(
            5,
            "Hello",
            -0.25f,
            List.of(new TokenLogprob.Alt(5, "Hello", -0.25f), new TokenLogprob.Alt(9, "Hi", -1.5f)));
    static final TokenLogprob CAFE = new TokenLogprob(7, " café", Float.NEGATIVE_INFINITY, List.of());

    static JsonNode roundTrip(ObjectNode n) throws Exception {
        return OpenAiJson.MAPPER.readTree(OpenAiJson.write(n));
    }

    static List<String> names(JsonNode n) {
        List<String> out = new ArrayList<>();
        n.fieldNames().forEachRemaining(out::add);
        return out;
    }

    @Test
    void ids() {
        assertThat(Responses.completionId()).matches("cmpl-[0-9a-f]{32}");
        assertThat(Responses.chatId()).matches("chatcmpl-[0-9a-f]{32}");
        assertThat(Responses.completionId()).isNotEqualTo(Responses.completionId());
        assertThat(Responses.now()).isGreaterThan(1_700_000_000L);
    }

    @Test
    void completionResponse() throws Exception {
        JsonNode r = roundTrip(CompletionResponses.response(
                "cmpl-1",
                123,
                "tiny",
                List.of(
                        new CompletionResponses.Choice(0, "Hello café", "length", null, List.of(HELLO, CAFE)),
                        new CompletionResponses.Choice(1, "Bye", "stop", "\n", null)),
                new Usage(3, 4)));
        assertThat(names(r)).containsExactly("id", "object", "created", "model", "choices", "usage");
        assertThat(r.get("object").asText()).isEqualTo("text_completion");
        assertThat(r.get("created").isIntegralNumber()).isTrue();
        JsonNode c0 = r.get("choices").get(0);
        assertThat(names(c0)).containsExactly("index", "text", "logprobs", "finish_reason", "stop_reason");
        assertThat(c0.get("text").asText()).isEqualTo("Hello café");
        assertThat(c0.get("finish_reason").asText()).isEqualTo("length");
        assertThat(c0.get("stop_reason").isNull()).isTrue();
        JsonNode lp = c0.get("logprobs");
        assertThat(names(lp)).containsExactlyInAnyOrder("tokens", "token_logprobs", "top_logprobs", "text_offset");
        assertThat(lp.get("tokens").toString()).isEqualTo("[\"Hello\",\" café\"]");
        assertThat(lp.get("token_logprobs").toString()).isEqualTo("[-0.25,-9999.0]");
        assertThat(lp.get("text_offset").toString()).isEqualTo("[0,5]");
        assertThat(lp.get("top_logprobs").get(0).toString()).isEqualTo("{\"Hello\":-0.25,\"Hi\":-1.5}");
        assertThat(lp.get("top_logprobs").get(1).toString()).isEqualTo("{\" café\":-9999.0}");
        JsonNode c1 = r.get("choices").get(1);
        assertThat(c1.get("logprobs").isNull()).isTrue();
        assertThat(c1.get("stop_reason").asText()).isEqualTo("\n");
        assertThat(r.get("usage").toString())
                .isEqualTo("{\"prompt_tokens\":3,\"total_tokens\":7,\"completion_tokens\":4,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":0}}");
        assertThat(new Usage(30, 4, 16).toJsonNode().toString())
                .as("cached prompt tokens as OpenAI reports them")
                .isEqualTo("{\"prompt_tokens\":30,\"total_tokens\":34,\"completion_tokens\":4,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":16}}");
    }

    @Test
    void completionChunkContinuesTextOffsetAndCarriesStopTokenId() throws Exception {
        JsonNode c =
                roundTrip(CompletionResponses.chunk("cmpl-1", 1, "tiny", 2, " café", List.of(CAFE), 12, "stop", 2));
        assertThat(names(c)).containsExactly("id", "object", "created", "model", "choices");
        assertThat(c.get("object").asText()).isEqualTo("text_completion");
        JsonNode choice = c.get("choices").get(0);
        assertThat(choice.get("index").asInt()).isEqualTo(2);
        assertThat(choice.get("logprobs").get("text_offset").toString()).isEqualTo("[12]");
        assertThat(choice.get("stop_reason").isInt()).isTrue();
        JsonNode mid = roundTrip(CompletionResponses.chunk("cmpl-1", 1, "tiny", 0, "x", null, 0, null, null));
        assertThat(mid.get("choices").get(0).get("finish_reason").isNull()).isTrue();
        assertThat(mid.has("usage")).as("usage only in the usage chunk").isFalse();
    }

    @Test
    void chatResponse() throws Exception {
        JsonNode r = roundTrip(ChatResponses.response(
                "chatcmpl-1",
                9,
                "tiny",
                List.of(new ChatResponses.Choice(0, "Hello café", "stop", null, List.of(HELLO, CAFE))),
                new Usage(10, 2)));
        assertThat(names(r)).containsExactly("id", "object", "created", "model", "choices", "usage");
        assertThat(r.get("object").asText()).isEqualTo("chat.completion");
        JsonNode c = r.get("choices").get(0);
        assertThat(names(c)).containsExactly("index", "message", "logprobs", "finish_reason", "stop_reason");
        assertThat(c.get("message").toString()).isEqualTo("{\"role\":\"assistant\",\"content\":\"Hello café\"}");
        JsonNode content = c.get("logprobs").get("content");
        assertThat(content).hasSize(2);
        assertThat(names(content.get(0))).containsExactly("token", "logprob", "bytes", "top_logprobs");
        assertThat(content.get(0).get("bytes").toString()).isEqualTo("[72,101,108,108,111]");
        assertThat(content.get(0).get("top_logprobs").get(1).toString())
                .isEqualTo("{\"token\":\"Hi\",\"logprob\":-1.5,\"bytes\":[72,105]}");
        assertThat(content.get(1).get("bytes").toString()).as("UTF-8, unsigned").isEqualTo("[32,99,97,102,195,169]");
        assertThat(content.get(1).get("logprob").asDouble()).isEqualTo(-9999.0);
        assertThat(content.get(1).get("top_logprobs")).isEmpty();
        assertThat(r.get("usage").get("total_tokens").asInt()).isEqualTo(12);
    }

    @Test
    void chatChunks() throws Exception {
        JsonNode first = roundTrip(ChatResponses.roleChunk("chatcmpl-1", 9, "tiny", 0));
        assertThat(first.get("object").asText()).isEqualTo("chat.completion.chunk");
        assertThat(first.get("choices").toString())
                .isEqualTo(
                        "[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]");
        JsonNode mid = roundTrip(ChatResponses.chunk("chatcmpl-1", 9, "tiny", 1, "Hel", List.of(HELLO), null, null));
        JsonNode c = mid.get("choices").get(0);
        assertThat(c.get("delta").toString()).isEqualTo("{\"content\":\"Hel\"}");
        assertThat(c.get("logprobs").get("content").get(0).get("token").asText())
                .isEqualTo("Hello");
        assertThat(c.get("finish_reason").isNull()).isTrue();
        assertThat(c.has("stop_reason")).isFalse();
        JsonNode last = roundTrip(ChatResponses.chunk("chatcmpl-1", 9, "tiny", 0, null, null, "length", null));
        assertThat(last.get("choices").get(0).get("delta").toString()).isEqualTo("{}");
        assertThat(last.get("choices").get(0).get("finish_reason").asText()).isEqualTo("length");
    }

    @Test
    void usageChunk() throws Exception {
        JsonNode u =
                roundTrip(Responses.usageChunk("chatcmpl-1", ChatResponses.CHUNK_OBJECT, 9, "tiny", new Usage(5, 6)));
        assertThat(names(u)).containsExactly("id", "object", "created", "model", "choices", "usage");
        assertThat(u.get("choices").isArray()).isTrue();
        assertThat(u.get("choices")).isEmpty();
        assertThat(u.get("usage").get("completion_tokens").asInt()).isEqualTo(6);
    }

    @Test
    void modelList() throws Exception {
        JsonNode l = roundTrip(Responses.modelList(M));
        assertThat(l.get("object").asText()).isEqualTo("list");
        JsonNode m = l.get("data").get(0);
        assertThat(m.get("id").asText()).isEqualTo("tiny");
        assertThat(m.get("object").asText()).isEqualTo("model");
        assertThat(m.get("created").asLong()).isEqualTo(1_700_000_000L);
        assertThat(m.get("owned_by").asText()).isEqualTo("tensorlane");
        assertThat(m.get("max_model_len").asInt()).isEqualTo(2048);
    }

    @Test
    void errorBody() {
        OpenAiException e = OpenAiException.badRequest("top_p", "top_p must be in (0, 1], got 0.0.");
        assertThat(e.toJson())
                .isEqualTo("{\"error\":{\"message\":\"top_p must be in (0, 1], got 0.0.\","
                        + "\"type\":\"invalid_request_error\",\"param\":\"top_p\",\"code\":null}}");
        OpenAiException nf = OpenAiException.modelNotFound("gpt-4");
        assertThat(nf.status()).isEqualTo(404);
        assertThat(nf.toJson()).contains("\"code\":\"model_not_found\"");
    }

    @Test
    void sseFraming() {
        ObjectNode n = OpenAiJson.MAPPER.createObjectNode().put("text", "a\nb");
        assertThat(SseFormat.event(n)).isEqualTo("data: {\"text\":\"a\\nb\"}\n\n");
        assertThat(SseFormat.eventBytes(n))
                .isEqualTo("data: {\"text\":\"a\\nb\"}\n\n".getBytes(StandardCharsets.UTF_8));
        assertThat(SseFormat.DONE).isEqualTo("data: [DONE]\n\n");
        assertThat(new String(SseFormat.doneBytes(), StandardCharsets.UTF_8)).isEqualTo("data: [DONE]\n\n");
        assertThat(SseFormat.error(OpenAiException.internal("engine stopped")))
                .isEqualTo("data: {\"error\":{\"message\":\"engine stopped\",\"type\":\"internal_server_error\","
                        + "\"param\":null,\"code\":null}}\n\n");
        // one line per event: what the client's SSE decoder splits on
        String chunk = SseFormat.event(ChatResponses.chunk("c", 1, "tiny", 0, "x\r\ny", null, null, null));
        assertThat(chunk.substring(0, chunk.length() - 2)).doesNotContain("\n").doesNotContain("\r");
    }
}
