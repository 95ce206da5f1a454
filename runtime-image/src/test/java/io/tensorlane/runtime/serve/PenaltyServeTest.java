package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.tensorlane.runtime.sched.RowPenalty;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * issue #30 items 4-5 over HTTP: penalties, logit_bias and min_tokens reach the step function as the GPU sampler's
 * entries and change the answer as the sampler would (the scripted executor applies them with the host reference);
 * echo; /tokenize and /detokenize in vLLM's shapes, for prompts and for chat messages through the template.
 */
class PenaltyServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ModelTokenizer tok;
    private ModelServer server;
    private ScriptExecutor executor;
    private int z;
    private ScriptedServer fixture;

    @BeforeEach
    void start() {
        fixture = new ScriptedServer("hermes");
        tok = fixture.tok;
        executor = fixture.executor;
        server = fixture.server;
        z = single("z");
        executor.background(z);
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    private int single(String s) {
        int[] ids = tok.encode(s, false);
        assertThat(ids).as("'%s' is one token", s).hasSize(1);
        return ids[0];
    }

    private HttpResponse<String> post(String path, int[] script, String body) throws Exception {
        executor.script(script);
        return fixture.post(path, body);
    }

    private JsonNode complete(String script, String extra) throws Exception {
        HttpResponse<String> r =
                post("/v1/completions", tok.encode(script, false), "{\"prompt\": \"ab\"" + extra + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static String text(JsonNode answer) {
        return answer.get("choices").get(0).get("text").asText();
    }

    @Test
    void withoutPenaltiesTheScriptComesOutAndNoEntriesAreSent() throws Exception {
        assertThat(text(complete("aaaa", ", \"max_tokens\": 10"))).isEqualTo("aaaa");
        assertThat(executor.lastPenalty)
                .as("an unpenalised request sends the sampler nothing")
                .isNull();
        // neutral values are no penalty either
        assertThat(text(complete(
                        "aaaa",
                        ", \"presence_penalty\": 0, \"frequency_penalty\": 0, \"repetition_penalty\": 1, "
                                + "\"logit_bias\": {}, \"min_tokens\": 0")))
                .isEqualTo("aaaa");
        assertThat(executor.lastPenalty).isNull();
    }

    @Test
    void frequencyPenaltyBreaksRepeats() throws Exception {
        // 'a' scores 1, 'z' 0.5: once 'a' was generated, 1 - 1 x count < 0.5 and 'z' wins, then 'z' is penalised too
        assertThat(text(complete("aaaaaa", ", \"max_tokens\": 6, \"frequency_penalty\": 1")))
                .isEqualTo("azazaz");
        RowPenalty p = executor.lastPenalty;
        assertThat(p.frequency()).isEqualTo(1f);
        assertThat(p.presence()).isZero();
        assertThat(p.repetition()).isEqualTo(1f);
    }

    @Test
    void presencePenaltyCountsOnce() throws Exception {
        // presence 0.6: 'a' once generated scores 0.4 < 'z' 0.5; 'z' then 0.5 - 0.6 < 0.4: 'a' again, forever
        assertThat(text(complete("aaaaa", ", \"max_tokens\": 5, \"presence_penalty\": 0.6")))
                .isEqualTo("azaaa");
    }

    @Test
    void repetitionPenaltyCoversThePrompt() throws Exception {
        // 'a' is in the prompt "ab": 1 / 3 < 0.5 from the first token on; 'z' is not, until generated
        assertThat(text(complete("aaa", ", \"max_tokens\": 3, \"repetition_penalty\": 3")))
                .isEqualTo("zaa");
        assertThat(executor.lastPenalty.repetition()).isEqualTo(3f);
    }

    @Test
    void logitBiasForcesAndBans() throws Exception {
        assertThat(text(complete("aaaa", ", \"max_tokens\": 4, \"logit_bias\": {\"" + z + "\": 100}")))
                .isEqualTo("zzzz");
        int a = single("a");
        assertThat(text(complete("aaaa", ", \"max_tokens\": 4, \"logit_bias\": {\"" + a + "\": -100}")))
                .isEqualTo("zzzz");
        assertThat(executor.lastPenalty.pairs()).containsExactly(a, Float.floatToRawIntBits(-100f));
    }

    @Test
    void badWordsAreNotWritten() throws Exception {
        assertThat(text(complete("aaaa", ", \"max_tokens\": 4, \"bad_words\": [\"a\"]")))
                .isEqualTo("zzzz");
        int[] xq = tok.encode("xq", false);
        assertThat(xq).as("a two-token word").hasSize(2);
        // 'x' alone is fine; 'q' right after it would complete the word and gives way to 'z'
        assertThat(text(complete("xqxq", ", \"max_tokens\": 4, \"bad_words\": [\"xq\"]")))
                .isEqualTo("xzxz");
    }

    @Test
    void minTokensHoldsEosBack() throws Exception {
        JsonNode early = complete("", ", \"max_tokens\": 10");
        assertThat(text(early)).isEmpty();
        JsonNode held = complete("", ", \"max_tokens\": 10, \"min_tokens\": 3");
        assertThat(text(held)).isEqualTo("zzz");
        assertThat(held.get("choices").get(0).get("finish_reason").asText()).isEqualTo("stop");
        assertThat(executor.lastPenalty.biasPairs())
                .as("no ban once min_tokens is reached")
                .isZero();
    }

    @Test
    void stopStringsWaitForMinTokens() throws Exception {
        assertThat(text(complete("xyzw", ", \"max_tokens\": 10, \"stop\": \"y\"")))
                .isEqualTo("x");
        // as vLLM: no stop string is looked for before min_tokens tokens; afterwards they are again
        assertThat(text(complete("xyzw", ", \"max_tokens\": 10, \"stop\": \"y\", \"min_tokens\": 3")))
                .isEqualTo("xyzw");
        assertThat(text(complete("xyzwq", ", \"max_tokens\": 10, \"stop\": \"z\", \"min_tokens\": 3")))
                .as("the third token reaches min_tokens: its stop string counts")
                .isEqualTo("xy");
    }

    @Test
    void echoPrependsThePrompt() throws Exception {
        assertThat(text(complete("cd", ", \"max_tokens\": 4, \"echo\": true"))).isEqualTo("abcd");
        HttpResponse<String> r = post(
                "/v1/completions",
                tok.encode("cd", false),
                "{\"prompt\": \"ab\", \"max_tokens\": 4, \"echo\": true, \"stream\": true}");
        StringBuilder streamed = new StringBuilder();
        for (String line : r.body().split("\n")) {
            if (line.startsWith("data: {")) {
                streamed.append(JSON.readTree(line.substring(6))
                        .get("choices")
                        .get(0)
                        .get("text")
                        .asText());
            }
        }
        assertThat(streamed.toString()).isEqualTo("abcd");
    }

    @Test
    void tokenizeAndDetokenizeRoundTrip() throws Exception {
        HttpResponse<String> r =
                post("/tokenize", new int[0], "{\"prompt\": \"hello world\", \"return_token_strs\": true}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode t = JSON.readTree(r.body());
        int[] want = tok.encode("hello world", true);
        assertThat(t.get("count").asInt()).isEqualTo(want.length);
        assertThat(t.get("max_model_len").asInt()).isEqualTo(1024);
        int[] got = new int[t.get("tokens").size()];
        for (int i = 0; i < got.length; i++) got[i] = t.get("tokens").get(i).asInt();
        assertThat(got).containsExactly(want);
        assertThat(t.get("token_strs").get(0).asText()).isEqualTo("<|begin_of_text|>");
        HttpResponse<String> d = post("/detokenize", new int[0], "{\"tokens\": " + t.get("tokens") + "}");
        assertThat(d.statusCode()).as(d.body()).isEqualTo(200);
        assertThat(JSON.readTree(d.body()).get("prompt").asText()).isEqualTo("<|begin_of_text|>hello world");
        JsonNode plain = JSON.readTree(
                post("/tokenize", new int[0], "{\"prompt\": \"hello world\", \"add_special_tokens\": false}")
                        .body());
        assertThat(plain.get("count").asInt()).isEqualTo(want.length - 1);
        assertThat(plain.get("token_strs").isNull()).isTrue();
    }

    @Test
    void tokenizeMessagesGivesTheChatPrompt() throws Exception {
        String messages = "\"messages\": [{\"role\": \"user\", \"content\": \"hi there\"}]";
        JsonNode t = JSON.readTree(
                post("/tokenize", new int[0], "{" + messages + "}").body());
        int[] ids = new int[t.get("tokens").size()];
        for (int i = 0; i < ids.length; i++) ids[i] = t.get("tokens").get(i).asInt();
        String text = JSON.readTree(post("/detokenize", new int[0], "{\"tokens\": " + t.get("tokens") + "}")
                        .body())
                .get("prompt")
                .asText();
        assertThat(text).contains("hi there");
        // with the generation prompt (the default) the prompt is longer than without it
        JsonNode bare =
                JSON.readTree(post("/tokenize", new int[0], "{" + messages + ", \"add_generation_prompt\": false}")
                        .body());
        assertThat(bare.get("count").asInt()).isLessThan(t.get("count").asInt());
        assertThat(tok.encode(text, false)).containsExactly(ids);
    }

    @Test
    void badTokenizeRequestsAre400sNamingTheField() throws Exception {
        HttpResponse<String> neither = post("/tokenize", new int[0], "{}");
        assertThat(neither.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(neither.body()).get("error").get("param").asText())
                .isEqualTo("prompt");
        HttpResponse<String> outside = post("/detokenize", new int[0], "{\"tokens\": [1, 277]}");
        assertThat(outside.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(outside.body()).get("error").get("param").asText())
                .isEqualTo("tokens");
        HttpResponse<String> notIds = post("/detokenize", new int[0], "{\"tokens\": \"abc\"}");
        assertThat(notIds.statusCode()).isEqualTo(400);
        HttpResponse<String> both = post(
                "/tokenize",
                new int[0],
                "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"continue_final_message\": true}");
        assertThat(both.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(both.body()).get("error").get("param").asText())
                .isEqualTo("continue_final_message");
    }
}
