package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The shared-prefix workloads: what they send, the conversations' histories, the hit rate. */
@Timeout(60)
class PrefixWorkloadTest {
    static final ObjectMapper JSON = new ObjectMapper();

    static LoadgenConfig with(LoadgenConfig c, Endpoint endpoint, PrefixWorkload p) {
        return new LoadgenConfig(
                c.baseUrl(),
                c.model(),
                endpoint,
                c.concurrencies(),
                c.requestRates(),
                c.maxConcurrency(),
                c.numRequests(),
                c.duration(),
                c.inputLen(),
                c.inputLenRange(),
                c.outputLen(),
                c.outputLenRange(),
                c.tokenIds(),
                c.vocabSize(),
                c.ignoreEos(),
                c.seed(),
                c.timeout(),
                c.warmup(),
                c.outDir(),
                p);
    }

    static LoadgenConfig config(Endpoint e, PrefixWorkload p, int n) {
        return with(TestConfigs.closed(URI.create("http://127.0.0.1:1"), List.of(3), n), e, p);
    }

    @Test
    void sharedPromptPutsOneSystemPromptBeforeEveryQuestion() throws Exception {
        PrefixWorkload p = new PrefixWorkload(PrefixWorkload.Mode.SHARED_PROMPT, 50, 1);
        LoadgenConfig chat = config(Endpoint.CHAT, p, 4);
        Workload w = new Workload(chat);
        assertThat(w.systemPrompt().split(" ")).hasSize(50);
        List<String> questions = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Workload.Prompt q = w.prompt(i);
            assertThat(q.system()).isEqualTo(w.systemPrompt());
            assertThat(q.inputLen()).isEqualTo(50 + q.text().split(" ").length);
            JsonNode m = JSON.readTree(OpenAiClient.body(chat, q)).get("messages");
            assertThat(m).hasSize(2);
            assertThat(m.get(0).get("role").asText()).isEqualTo("system");
            assertThat(m.get(0).get("content").asText()).isEqualTo(w.systemPrompt());
            assertThat(m.get(1).get("content").asText()).isEqualTo(q.text());
            questions.add(q.text());
        }
        assertThat(questions).doesNotHaveDuplicates();
        LoadgenConfig completions = config(Endpoint.COMPLETIONS, p, 4);
        String prompt = JSON.readTree(OpenAiClient.body(completions, new Workload(completions).prompt(2)))
                .get("prompt")
                .asText();
        assertThat(prompt).startsWith(w.systemPrompt() + "\n\nUser: ").endsWith("\nAssistant:");
        assertThat(new Workload(config(Endpoint.CHAT, PrefixWorkload.NONE, 4))
                        .prompt(0)
                        .system())
                .isNull();
    }

    @Test
    void conversationsResendTheirHistoryWithTheServersAnswers() throws Exception {
        int turns = 3;
        LoadgenConfig c = config(Endpoint.CHAT, new PrefixWorkload(PrefixWorkload.Mode.MULTI_TURN, 20, turns), 5);
        Map<Integer, Workload.Prompt> sent = new ConcurrentHashMap<>();
        LoadRunner.Sender fake = (p, level, start) -> {
            sent.put(p.index(), p);
            boolean fail = p.index() == 3 * turns + 1; // conversation 3 fails at its second turn
            return new RequestRecord(
                    level,
                    p.index(),
                    0,
                    p.inputLen(),
                    p.maxTokens(),
                    2,
                    !fail,
                    fail ? 500 : 200,
                    fail ? "HTTP 500" : null,
                    1,
                    2,
                    new double[] {1},
                    2,
                    10 * p.index(),
                    "answer " + p.index());
        };
        LoadRunner.LevelResult r = new LoadRunner(c, fake).run(LoadgenConfig.Level.closed(2), null);
        assertThat(r.records()).hasSize(5 * turns - 1); // conversation 3 stopped after its failed turn
        assertThat(sent).doesNotContainKey(3 * turns + 2);
        Workload w = new Workload(c);
        for (int conv = 0; conv < 5; conv++) {
            List<String> history = new ArrayList<>();
            for (int t = 0; t < turns && sent.containsKey(conv * turns + t); t++) {
                Workload.Prompt p = sent.get(conv * turns + t);
                assertThat(p.system()).isEqualTo(w.systemPrompt());
                assertThat(p.history()).isEqualTo(history);
                history.add(p.text());
                history.add("answer " + p.index());
            }
        }
        JsonNode m = JSON.readTree(OpenAiClient.body(c, sent.get(2)));
        List<String> roles = new ArrayList<>();
        m.get("messages").forEach(x -> roles.add(x.get("role").asText()));
        assertThat(roles).containsExactly("system", "user", "assistant", "user", "assistant", "user");
        assertThat(m.get("messages").get(2).get("content").asText()).isEqualTo("answer 0");
    }

    @Test
    void theHitRateIsCachedOverPromptTokensOfTheRequestsThatReportIt() {
        StreamAccumulator a = new StreamAccumulator(0);
        a.status(200);
        a.event("{\"choices\":[{\"index\":0,\"text\":\"hel\"}]}", 5_000_000);
        a.event("{\"choices\":[{\"index\":0,\"text\":\"lo\"}]}", 6_000_000);
        a.event(
                "{\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":2,"
                        + "\"prompt_tokens_details\":{\"cached_tokens\":32}}}",
                7_000_000);
        a.event("[DONE]", 8_000_000);
        RequestRecord r = a.finish("c=1", StreamAccumulatorTest.PROMPT, 0, 9_000_000, null);
        assertThat(r.cachedTokens()).isEqualTo(32);
        assertThat(r.text()).isEqualTo("hello");
        RequestRecord unreported = new RequestRecord("c=1", 1, 0, 60, 4, 2, true, 200, null, 1, 2, new double[0], 2);
        RequestRecord miss = new RequestRecord("c=1", 2, 0, 24, 4, 2, true, 200, null, 1, 2, new double[0], 2, 0, "x");
        LevelSummary s = LevelSummary.of(LoadgenConfig.Level.closed(1), List.of(r, unreported, miss), 1);
        assertThat(s.cachedTokens()).isEqualTo(32);
        assertThat(s.cacheHitRate()).isEqualTo(0.5); // 32 of 40 + 24
        assertThat(LoadgenReport.table(List.of(s)))
                .contains("c=1: prefix cache hit rate 50.0% (32 cached prompt tokens)");
        LevelSummary none = LevelSummary.of(LoadgenConfig.Level.closed(1), List.of(unreported), 1);
        assertThat(none.cacheHitRate()).isNaN();
        assertThat(LoadgenReport.table(Collections.singletonList(none))).doesNotContain("hit rate");
    }

    @Test
    void badCombinationsAreRefused() {
        LoadgenConfig open = TestConfigs.closed(URI.create("http://127.0.0.1:1"), List.of(), 5);
        LoadgenConfig rates = new LoadgenConfig(
                open.baseUrl(),
                open.model(),
                Endpoint.CHAT,
                List.of(),
                List.of(2.0),
                0,
                5,
                null,
                16,
                0,
                8,
                0,
                false,
                32000,
                true,
                1,
                open.timeout(),
                0,
                open.outDir(),
                new PrefixWorkload(PrefixWorkload.Mode.MULTI_TURN, 10, 0));
        assertThat(rates.problems())
                .contains(
                        "--turns must be >= 1, not 0",
                        "--workload multi-turn runs closed loop: --concurrency conversations at once, not --request-rate");
        assertThat(PrefixWorkload.Mode.parse("Shared-Prompt")).isEqualTo(PrefixWorkload.Mode.SHARED_PROMPT);
    }
}
