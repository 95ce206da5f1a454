package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Completions' {@code echo} with {@code logprobs} over HTTP (issue #30 item 4), in vLLM's shape: the choice's text
 * starts with the prompt, the logprobs list the prompt's tokens first (the first with a null logprob and null
 * alternatives) then the generated ones, {@code text_offset} points into the text, streaming sends the prompt first,
 * and {@code max_tokens: 0} scores the prompt alone (lm-eval-harness). Every prompt logprob is checked against an fp64
 * log-softmax of the scripted executor's logits ({@link ScriptExecutor#logit}) for the token and position its row fed;
 * the scheduler has 8 logits rows a step, so a longer prompt is scored over several steps.
 */
class EchoServeTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int VOCAB = 277;

    private ScriptedServer fixture;
    private ModelTokenizer tok;
    private ScriptExecutor executor;

    @BeforeEach
    void start() {
        fixture = new ScriptedServer("hermes");
        tok = fixture.tok;
        executor = fixture.executor;
    }

    @AfterEach
    void stop() {
        fixture.close();
    }

    /** fp64 log-softmax of the row that a token {@code fed} at {@code pos} produces, at {@code id}. */
    private static double reference(int fed, int pos, int id) {
        double max = Double.NEGATIVE_INFINITY;
        for (int v = 0; v < VOCAB; v++) max = Math.max(max, ScriptExecutor.logit(fed, pos, v));
        double sum = 0;
        for (int v = 0; v < VOCAB; v++) sum += Math.exp(ScriptExecutor.logit(fed, pos, v) - max);
        return ScriptExecutor.logit(fed, pos, id) - max - Math.log(sum);
    }

    /** The k most probable ids of that row (ties: lower id first). */
    private static List<Integer> top(int fed, int pos, int k) {
        return IntStream.range(0, VOCAB)
                .boxed()
                .sorted(Comparator.<Integer>comparingDouble(v -> -ScriptExecutor.logit(fed, pos, v))
                        .thenComparing(v -> v))
                .limit(k)
                .toList();
    }

    private String text(int id) {
        return tok.decode(new int[] {id}, false);
    }

    private JsonNode complete(String prompt, String script, String extra) throws Exception {
        executor.script(tok.encode(script, false));
        executor.promptLength(tok.encode(prompt, true).length);
        HttpResponse<String> r = fixture.post(
                "/v1/completions",
                "{\"prompt\": " + JSON.writeValueAsString(prompt) + ", \"echo\": true" + extra + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    /** The chunks' choices of a streamed answer, in order. */
    private List<JsonNode> stream(String prompt, String script, String extra) throws Exception {
        executor.script(tok.encode(script, false));
        executor.promptLength(tok.encode(prompt, true).length);
        HttpResponse<String> r = fixture.post(
                "/v1/completions",
                "{\"prompt\": " + JSON.writeValueAsString(prompt) + ", \"echo\": true, \"stream\": true" + extra + "}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        List<JsonNode> out = new ArrayList<>();
        for (String line : r.body().split("\n")) {
            if (line.startsWith("data: {")) {
                JsonNode c = JSON.readTree(line.substring(6)).get("choices");
                if (c.size() > 0) out.add(c.get(0));
            }
        }
        return out;
    }

    /** Checks prompt token {@code i}'s entry (i ≥ 1) against the reference, with {@code k} alternatives. */
    private void checkPromptToken(JsonNode lp, int[] ids, int i, int k) {
        int fed = ids[i - 1];
        assertThat(lp.get("tokens").get(i).asText()).isEqualTo(text(ids[i]));
        assertThat(lp.get("token_logprobs").get(i).asDouble())
                .as("prompt token %d", i)
                .isCloseTo(reference(fed, i - 1, ids[i]), within(1e-5));
        // the chosen token first, then the k most probable; a text two ids share keeps the first (as vLLM's dict)
        java.util.Map<String, Double> want = new java.util.LinkedHashMap<>();
        want.put(text(ids[i]), reference(fed, i - 1, ids[i]));
        for (int id : top(fed, i - 1, k)) {
            want.putIfAbsent(text(id), reference(fed, i - 1, id));
        }
        JsonNode alts = lp.get("top_logprobs").get(i);
        assertThat(alts.size()).as("alternatives of prompt token %d", i).isEqualTo(want.size());
        want.forEach((t, v) -> {
            assertThat(alts.has(t))
                    .as("'%s' among the alternatives of prompt token %d", t, i)
                    .isTrue();
            assertThat(alts.get(t).asDouble()).isCloseTo(v, within(1e-5));
        });
    }

    private int[] prefixOffsets(int[] ids) {
        int[] out = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            String before = tok.decode(java.util.Arrays.copyOf(ids, i), true);
            out[i] = before.codePointCount(0, before.length());
        }
        return out;
    }

    @Test
    void echoWithLogprobsListsThePromptThenTheAnswer() throws Exception {
        String prompt = "hello world";
        int[] ids = tok.encode(prompt, true);
        int[] gen = tok.encode("cd", false);
        JsonNode answer = complete(prompt, "cd", ", \"max_tokens\": 2, \"logprobs\": 3");
        JsonNode c = answer.get("choices").get(0);
        assertThat(c.get("text").asText()).isEqualTo("hello worldcd");
        JsonNode lp = c.get("logprobs");
        int n = ids.length + gen.length;
        for (String f : new String[] {"tokens", "token_logprobs", "top_logprobs", "text_offset"}) {
            assertThat(lp.get(f)).as(f).hasSize(n);
        }
        // the first prompt token: listed, nothing scores it (vLLM: null logprob, null alternatives)
        assertThat(lp.get("tokens").get(0).asText()).isEqualTo(text(ids[0]));
        assertThat(lp.get("token_logprobs").get(0).isNull()).isTrue();
        assertThat(lp.get("top_logprobs").get(0).isNull()).isTrue();
        for (int i = 1; i < ids.length; i++) {
            checkPromptToken(lp, ids, i, 3);
        }
        // the generated tokens: the first drawn from the prompt's last row, the second from the first's
        int L = ids.length;
        assertThat(lp.get("token_logprobs").get(L).asDouble())
                .isCloseTo(reference(ids[L - 1], L - 1, gen[0]), within(1e-5));
        assertThat(lp.get("token_logprobs").get(L + 1).asDouble())
                .isCloseTo(reference(gen[0], L, gen[1]), within(1e-5));
        // offsets point into the text: the prompt's tokens where their text starts, the answer's after the prompt
        int[] want = prefixOffsets(ids);
        for (int i = 0; i < L; i++) {
            assertThat(lp.get("text_offset").get(i).asInt()).as("offset %d", i).isEqualTo(want[i]);
        }
        assertThat(lp.get("text_offset").get(L).asInt()).isEqualTo(prompt.length());
        assertThat(lp.get("text_offset").get(L + 1).asInt()).isEqualTo(prompt.length() + 1);
        assertThat(answer.get("usage").get("prompt_tokens").asInt()).isEqualTo(L);
        assertThat(answer.get("usage").get("completion_tokens").asInt()).isEqualTo(2);
    }

    @Test
    void streamingSendsThePromptFirstAndTheSameLogprobs() throws Exception {
        String prompt = "abc abc";
        JsonNode whole = complete(prompt, "xyz", ", \"max_tokens\": 3, \"logprobs\": 2")
                .get("choices")
                .get(0);
        List<JsonNode> chunks = stream(prompt, "xyz", ", \"max_tokens\": 3, \"logprobs\": 2");
        assertThat(chunks.get(0).get("text").asText())
                .as("the prompt comes first")
                .isEqualTo(prompt);
        assertThat(chunks.get(0).get("logprobs").get("tokens")).hasSize(tok.encode(prompt, true).length);
        StringBuilder text = new StringBuilder();
        ArrayNode[] merged = new ArrayNode[4];
        String[] fields = {"tokens", "token_logprobs", "top_logprobs", "text_offset"};
        for (int f = 0; f < 4; f++) merged[f] = JSON.createArrayNode();
        for (JsonNode c : chunks) {
            text.append(c.get("text").asText());
            if (!c.get("logprobs").isNull()) {
                for (int f = 0; f < 4; f++)
                    merged[f].addAll((ArrayNode) c.get("logprobs").get(fields[f]));
            }
        }
        assertThat(text.toString()).isEqualTo(whole.get("text").asText());
        for (int f = 0; f < 4; f++) {
            assertThat(merged[f]).as(fields[f]).isEqualTo(whole.get("logprobs").get(fields[f]));
        }
        assertThat(chunks.get(chunks.size() - 1).get("finish_reason").asText()).isEqualTo("length");
    }

    @Test
    void maxTokensZeroScoresThePromptAlone() throws Exception {
        String prompt = "the cat sat";
        int[] ids = tok.encode(prompt, true);
        JsonNode answer = complete(prompt, "zz", ", \"max_tokens\": 0, \"logprobs\": 1, \"temperature\": 0");
        JsonNode c = answer.get("choices").get(0);
        assertThat(c.get("text").asText()).isEqualTo(prompt);
        assertThat(c.get("finish_reason").asText()).isEqualTo("length");
        assertThat(c.get("logprobs").get("tokens")).hasSize(ids.length);
        for (int i = 1; i < ids.length; i++) {
            checkPromptToken(c.get("logprobs"), ids, i, 1);
        }
        assertThat(answer.get("usage").get("completion_tokens").asInt()).isZero();
        assertThat(answer.get("usage").get("prompt_tokens").asInt()).isEqualTo(ids.length);
        List<JsonNode> chunks = stream(prompt, "zz", ", \"max_tokens\": 0, \"logprobs\": 1");
        StringBuilder text = new StringBuilder();
        int tokens = 0;
        for (JsonNode ch : chunks) {
            text.append(ch.get("text").asText());
            if (!ch.get("logprobs").isNull())
                tokens += ch.get("logprobs").get("tokens").size();
        }
        assertThat(text.toString()).isEqualTo(prompt);
        assertThat(tokens).isEqualTo(ids.length);
        // without logprobs: the prompt, nothing more
        JsonNode bare =
                complete(prompt, "zz", ", \"max_tokens\": 0").get("choices").get(0);
        assertThat(bare.get("text").asText()).isEqualTo(prompt);
        assertThat(bare.get("logprobs").isNull()).isTrue();
    }

    @Test
    void aPromptLongerThanTheLogitsRowsIsScoredOverSeveralSteps() throws Exception {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < 300; i++) b.append("w").append(i % 10).append(' ');
        String prompt = b.toString().strip();
        int[] ids = tok.encode(prompt, true);
        assertThat(ids.length).as("far more than the 8 logits rows of a step").isGreaterThan(40);
        JsonNode c = complete(prompt, "q", ", \"max_tokens\": 1, \"logprobs\": 2")
                .get("choices")
                .get(0);
        JsonNode lp = c.get("logprobs");
        assertThat(lp.get("tokens")).hasSize(ids.length + 1);
        for (int i = 1; i < ids.length; i++) {
            checkPromptToken(lp, ids, i, 2);
        }
        assertThat(executor.maxLogitRows)
                .as("no step asked for more rows than it can return")
                .isLessThanOrEqualTo(8);
        assertThat(c.get("text").asText()).isEqualTo(prompt + "q");
    }

    @Test
    void everyChoiceAndTokenIdPromptsEcho() throws Exception {
        String prompt = "ab ab";
        int[] ids = tok.encode(prompt, true);
        JsonNode answer = complete(prompt, "c", ", \"max_tokens\": 1, \"logprobs\": 0, \"n\": 2");
        for (JsonNode c : answer.get("choices")) {
            assertThat(c.get("text").asText()).isEqualTo(prompt + "c");
            JsonNode lp = c.get("logprobs");
            assertThat(lp.get("tokens")).hasSize(ids.length + 1);
            for (int i = 1; i < ids.length; i++) {
                checkPromptToken(lp, ids, i, 0);
            }
        }
        // a prompt of token ids echoes its decoded text
        executor.script(tok.encode("c", false));
        executor.promptLength(ids.length);
        HttpResponse<String> r = fixture.post(
                "/v1/completions",
                "{\"prompt\": " + JSON.writeValueAsString(ids) + ", \"echo\": true, \"max_tokens\": 1}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(JSON.readTree(r.body()).get("choices").get(0).get("text").asText())
                .isEqualTo(tok.decode(ids, true) + "c");
    }

    @Test
    void aScoredPromptMustLeaveRoomForTheDroppedToken() throws Exception {
        int[] ids = new int[1024]; // the fixture's context is 1024 tokens
        java.util.Arrays.fill(ids, tok.encode("a", false)[0]);
        HttpResponse<String> r = fixture.post(
                "/v1/completions",
                "{\"prompt\": " + JSON.writeValueAsString(ids)
                        + ", \"echo\": true, \"max_tokens\": 0, \"logprobs\": 1}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).contains("maximum context length is 1024");
    }
}
