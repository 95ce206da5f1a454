package io.tensorlane.runtime.openai;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Typical requests, as the openai Python client and common gateways send them. */
class RequestParserTest {
    static final ModelInfo M = new ModelInfo("tiny", 2048, 1000, 1_700_000_000L);

    static CompletionRequest cmpl(String json) {
        return RequestParser.parseCompletion(json.getBytes(StandardCharsets.UTF_8), M);
    }

    static ChatCompletionRequest chat(String json) {
        return RequestParser.parseChat(json.getBytes(StandardCharsets.UTF_8), M);
    }

    @Test
    void minimalCompletionTakesTheDefaults() {
        CompletionRequest r = cmpl("{\"model\": \"tiny\", \"prompt\": \"Once upon a time\"}");
        assertThat(r.model()).isEqualTo("tiny");
        assertThat(r.prompts()).containsExactly(Prompt.ofText("Once upon a time"));
        GenerationParams p = r.params();
        assertThat(p.temperature()).isEqualTo(1.0);
        assertThat(p.topP()).isEqualTo(1.0);
        assertThat(p.topK()).isEqualTo(-1);
        assertThat(p.minP()).isZero();
        assertThat(p.seed()).isNull();
        assertThat(p.maxTokens()).isNull();
        assertThat(p.stop()).isEmpty();
        assertThat(p.stopTokenIds()).isEmpty();
        assertThat(p.n()).isEqualTo(1);
        assertThat(p.stream()).isFalse();
        assertThat(p.includeUsage()).isFalse();
        assertThat(p.ignoreEos()).isFalse();
        assertThat(p.logprobs()).isNull();
        assertThat(p.wantsLogprobs()).isFalse();
        assertThat(p.skipSpecialTokens()).isTrue();
        assertThat(p.includeStopStrInOutput()).isFalse();
        assertThat(r.user()).isNull();
    }

    @Test
    void fullCompletionAsTheOpenAiClientSendsIt() {
        // client.completions.create(..., stream=True, stream_options={"include_usage": True}, extra_body={...})
        CompletionRequest r = cmpl("""
        {"model": "tiny", "prompt": ["a", "b"], "max_tokens": 16, "temperature": 0, "top_p": 0.9, "seed": 7,
         "stop": "\\n", "n": 2, "stream": true, "stream_options": {"include_usage": true}, "logprobs": 5,
         "presence_penalty": 0, "frequency_penalty": 0.0, "best_of": 2, "user": "u1", "echo": false,
         "top_k": 0, "min_p": 0.05, "ignore_eos": true, "stop_token_ids": [2, 3], "repetition_penalty": 1,
         "logit_bias": {}, "suffix": null, "unknown_field": {"x": 1}}""");
        assertThat(r.prompts()).containsExactly(Prompt.ofText("a"), Prompt.ofText("b"));
        GenerationParams p = r.params();
        assertThat(p.maxTokens()).isEqualTo(16);
        assertThat(p.greedy()).isTrue();
        assertThat(p.topP()).isEqualTo(0.9);
        assertThat(p.topK()).as("0 normalized to -1 (off)").isEqualTo(-1);
        assertThat(p.minP()).isEqualTo(0.05);
        assertThat(p.seed()).isEqualTo(7L);
        assertThat(p.stop()).containsExactly("\n");
        assertThat(p.stopTokenIds()).containsExactly(2, 3);
        assertThat(p.n()).isEqualTo(2);
        assertThat(p.stream()).isTrue();
        assertThat(p.includeUsage()).isTrue();
        assertThat(p.ignoreEos()).isTrue();
        assertThat(p.logprobs()).isEqualTo(5);
        assertThat(r.user()).isEqualTo("u1");
    }

    @Test
    void tokenIdPrompts() {
        assertThat(cmpl("{\"prompt\": [1, 2, 999]}").prompts()).containsExactly(Prompt.ofIds(List.of(1, 2, 999)));
        assertThat(cmpl("{\"prompt\": [[5], [6, 7]]}").prompts())
                .containsExactly(Prompt.ofIds(List.of(5)), Prompt.ofIds(List.of(6, 7)));
        assertThat(cmpl("{\"prompt\": [4.0]}").prompts())
                .as("integral floats, as pydantic")
                .containsExactly(Prompt.ofIds(List.of(4)));
        assertThat(cmpl("{\"prompt\": [1]}").prompts().get(0).isText()).isFalse();
    }

    @Test
    void modelMayBeOmittedAsInVllm() {
        assertThat(cmpl("{\"prompt\": \"x\"}").model()).isEqualTo("tiny");
        assertThat(chat("{\"model\": null, \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}")
                        .model())
                .isEqualTo("tiny");
    }

    @Test
    void stopListAndLogprobsZero() {
        GenerationParams p = cmpl("{\"prompt\": \"x\", \"stop\": [\"a\", \"b\", \"c\", \"d\", \"e\"], \"logprobs\": 0}")
                .params();
        assertThat(p.stop()).containsExactly("a", "b", "c", "d", "e");
        assertThat(p.logprobs()).as("0: the chosen token's logprob only").isZero();
        assertThat(p.wantsLogprobs()).isTrue();
    }

    @Test
    void echoScoresThePromptWithMaxTokensZero() {
        GenerationParams lm = cmpl("{\"prompt\": \"x\", \"echo\": true, \"logprobs\": 3, \"max_tokens\": 0}")
                .params();
        assertThat(lm.scoresOnly())
                .as("what lm-eval-harness sends: score the prompt, generate nothing")
                .isTrue();
        assertThat(lm.promptLogprobs()).isEqualTo(3);
        GenerationParams both = cmpl("{\"prompt\": \"x\", \"echo\": true, \"logprobs\": 0, \"max_tokens\": 4}")
                .params();
        assertThat(both.scoresOnly()).isFalse();
        assertThat(both.promptLogprobs())
                .as("logprobs 0: each prompt token's own logprob")
                .isZero();
        GenerationParams plain = cmpl("{\"prompt\": \"x\", \"echo\": true}").params();
        assertThat(plain.promptLogprobs())
                .as("echo without logprobs gathers none")
                .isEqualTo(-1);
        assertThat(cmpl("{\"prompt\": \"x\", \"logprobs\": 2}").params().promptLogprobs())
                .as("logprobs without echo: the generated tokens' only")
                .isEqualTo(-1);
    }

    @Test
    void toolCallHistoryReachesTheTemplateAsVllmHandsIt() {
        ChatCompletionRequest r = chat("""
        {"messages": [
           {"role": "user", "content": "Weather in Paris?"},
           {"role": "assistant", "content": null, "tool_calls": [
              {"id": "abc123DEF", "type": "function",
               "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\", \\"days\\": [1, 2.5]}"}},
              {"id": "b", "type": "function", "function": {"name": "noop", "arguments": ""}},
              {"id": "c", "type": "function", "function": {"name": "obj", "arguments": {"k": true}}}]},
           {"role": "tool", "tool_call_id": "abc123DEF", "content": "{\\"t\\": 21}"},
           {"role": "assistant", "content": "Sunny.", "tool_calls": []}],
         "documents": [{"title": "a", "text": "b"}]}""");
        Map<String, Object> paris = new LinkedHashMap<>();
        paris.put("city", "Paris");
        paris.put("days", List.of(1, 2.5));
        assertThat(r.messages().get(1).toolCalls())
                .containsExactly(
                        Map.of(
                                "id",
                                "abc123DEF",
                                "type",
                                "function",
                                "function",
                                Map.of("name", "get_weather", "arguments", paris)),
                        Map.of(
                                "id",
                                "b",
                                "type",
                                "function",
                                "function",
                                Map.of("name", "noop", "arguments", Map.of())),
                        Map.of(
                                "id",
                                "c",
                                "type",
                                "function",
                                "function",
                                Map.of("name", "obj", "arguments", Map.of("k", true))));
        assertThat(r.messages().get(1).content()).isEmpty();
        assertThat(r.messages().get(2)).isEqualTo(new ChatMessage("tool", "{\"t\": 21}", null, "abc123DEF", null));
        assertThat(r.messages().get(3).toolCalls())
                .as("an empty list is dropped")
                .isNull();
        assertThat(r.tools()).as("no tools: None").isNull();
        assertThat(r.documents()).containsExactly(Map.of("title", "a", "text", "b"));
    }

    @Test
    void typicalChat() {
        ChatCompletionRequest r = chat("""
        {"model": "tiny", "messages": [
           {"role": "system", "content": "Be brief."},
           {"role": "user", "content": [{"type": "text", "text": "Hello"}, {"type": "text", "text": "there"}]},
           {"role": "assistant", "content": null},
           {"role": "tool", "content": "42", "tool_call_id": "c1"},
           {"role": "user", "content": "Again", "name": "bob"}],
         "max_tokens": 100, "temperature": 0.7, "stream": true, "stream_options": {"include_usage": true},
         "logprobs": true, "top_logprobs": 3, "chat_template_kwargs": {"enable_thinking": false},
         "tool_choice": "none", "tools": [{"type": "function", "function": {"name": "f"}}]}""");
        assertThat(r.messages())
                .containsExactly(
                        new ChatMessage("system", "Be brief."),
                        new ChatMessage("user", "Hello\nthere"),
                        new ChatMessage("assistant", ""),
                        new ChatMessage("tool", "42", null, "c1", null),
                        new ChatMessage("user", "Again", null, null, "bob"));
        assertThat(r.tools()).containsExactly(Map.of("type", "function", "function", Map.of("name", "f")));
        assertThat(r.documents()).isNull();
        assertThat(r.params().maxTokens()).isEqualTo(100);
        assertThat(r.params().temperature()).isEqualTo(0.7);
        assertThat(r.params().includeUsage()).isTrue();
        assertThat(r.params().logprobs()).isEqualTo(3);
        assertThat(r.addGenerationPrompt()).isTrue();
        assertThat(r.continueFinalMessage()).isFalse();
        assertThat(r.chatTemplateKwargs()).isEqualTo(Map.of("enable_thinking", false));
    }

    @Test
    void maxCompletionTokensOverridesMaxTokens() {
        String msgs = "\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]";
        assertThat(chat("{" + msgs + ", \"max_tokens\": 10, \"max_completion_tokens\": 20}")
                        .params()
                        .maxTokens())
                .isEqualTo(20);
        assertThat(chat("{" + msgs + ", \"max_completion_tokens\": 30}")
                        .params()
                        .maxTokens())
                .isEqualTo(30);
        assertThat(chat("{" + msgs + ", \"max_tokens\": 10, \"max_completion_tokens\": null}")
                        .params()
                        .maxTokens())
                .isEqualTo(10);
    }

    @Test
    void chatLogprobsFlag() {
        String msgs = "\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]";
        assertThat(chat("{" + msgs + "}").params().logprobs()).isNull();
        assertThat(chat("{" + msgs + ", \"logprobs\": false, \"top_logprobs\": 0}")
                        .params()
                        .logprobs())
                .isNull();
        assertThat(chat("{" + msgs + ", \"logprobs\": true}").params().logprobs())
                .isZero();
        assertThat(chat("{" + msgs + ", \"logprobs\": true, \"top_logprobs\": 20}")
                        .params()
                        .logprobs())
                .isEqualTo(20);
    }

    @Test
    void greedyWithSeveralChoicesIsAllowed() {
        GenerationParams p =
                cmpl("{\"prompt\": \"x\", \"n\": 4, \"temperature\": 0}").params();
        assertThat(p.n()).isEqualTo(4);
        assertThat(p.greedy()).isTrue();
    }

    @Test
    void continueFinalMessage() {
        ChatCompletionRequest r = chat(
                "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}, {\"role\": \"assistant\", "
                        + "\"content\": \"The answer is\"}], \"add_generation_prompt\": false, \"continue_final_message\": true}");
        assertThat(r.addGenerationPrompt()).isFalse();
        assertThat(r.continueFinalMessage()).isTrue();
        assertThat(r.chatTemplateKwargs()).isEmpty();
    }
}
