package io.tensorlane.runtime.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad requests: each answered with the expected status, param and a message that names the problem. */
class BadRequestTest {
    static final ModelInfo M = new ModelInfo("tiny", 2048, 1000, 1_700_000_000L);

    private static final String P = "\"model\": \"tiny\", \"prompt\": \"hi\"";
    private static final String F = "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}]";
    private static final String C = "\"model\": \"tiny\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]";

    static Arguments cmpl(String body, int status, String param, String fragment) {
        return Arguments.of("completions", body, status, param, fragment);
    }

    static Arguments chat(String body, int status, String param, String fragment) {
        return Arguments.of("chat", body, status, param, fragment);
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                cmpl("", 400, null, "body is empty"),
                cmpl("{\"model\": \"tiny\", \"prompt\": ", 400, null, "not valid JSON"),
                cmpl("{\"model\": \"tiny\"} {}", 400, null, "not valid JSON"),
                cmpl("[1, 2]", 400, null, "must be a JSON object, got an array"),
                cmpl("{\"model\": \"gpt-4\", \"prompt\": \"hi\"}", 404, "model", "The model `gpt-4` does not exist."),
                cmpl("{\"model\": 5, \"prompt\": \"hi\"}", 400, "model", "'model' must be a string, got a number"),
                cmpl("{\"model\": \"tiny\"}", 400, "prompt", "'prompt' is required"),
                cmpl("{\"prompt\": \"\"}", 400, "prompt", "must not be empty"),
                cmpl("{\"prompt\": []}", 400, "prompt", "must not be empty"),
                cmpl("{\"prompt\": [[]]}", 400, "prompt", "must not be empty"),
                cmpl("{\"prompt\": [\"a\", 1]}", 400, "prompt", "an array of token ids"),
                cmpl("{\"prompt\": {\"text\": \"a\"}}", 400, "prompt", "must be a string, an array of strings"),
                cmpl("{\"prompt\": [1, 1000]}", 400, "prompt", "Token id 1000 is out of vocabulary"),
                cmpl("{\"prompt\": [[1], [-1]]}", 400, "prompt", "Token id -1 is out of vocabulary"),
                cmpl("{\"prompt\": [1.5]}", 400, "prompt", "must be an integer"),
                cmpl(
                        "{" + P + ", \"temperature\": -0.5}",
                        400,
                        "temperature",
                        "temperature must be non-negative, got -0.5"),
                cmpl("{" + P + ", \"temperature\": NaN}", 400, "temperature", "must be a finite number, got NaN"),
                cmpl("{" + P + ", \"temperature\": Infinity}", 400, "temperature", "must be a finite number"),
                cmpl("{" + P + ", \"temperature\": 1e999}", 400, "temperature", "must be a finite number"),
                cmpl("{" + P + ", \"temperature\": \"hot\"}", 400, "temperature", "must be a number, got a string"),
                cmpl("{" + P + ", \"top_p\": 0}", 400, "top_p", "top_p must be in (0, 1], got 0.0"),
                cmpl("{" + P + ", \"top_p\": 1.5}", 400, "top_p", "top_p must be in (0, 1]"),
                cmpl(
                        "{" + P + ", \"top_k\": -2}",
                        400,
                        "top_k",
                        "top_k must be -1 or 0 (disable), or at least 1, got -2"),
                cmpl("{" + P + ", \"min_p\": 1.1}", 400, "min_p", "min_p must be in [0, 1]"),
                cmpl("{" + P + ", \"max_tokens\": 0}", 400, "max_tokens", "max_tokens must be at least 1, got 0"),
                cmpl("{" + P + ", \"max_tokens\": -5}", 400, "max_tokens", "max_tokens must be at least 1"),
                cmpl("{" + P + ", \"max_tokens\": 3.5}", 400, "max_tokens", "must be an integer, got 3.5"),
                cmpl("{" + P + ", \"max_tokens\": 99999999999}", 400, "max_tokens", "out of range"),
                cmpl("{" + P + ", \"n\": 0}", 400, "n", "n must be at least 1, got 0"),
                cmpl("{" + P + ", \"n\": 17}", 400, "n", "n must be at most 16"),
                cmpl("{" + P + ", \"logprobs\": 21}", 400, "logprobs", "logprobs must be in [0, 20], got 21"),
                cmpl("{" + P + ", \"logprobs\": -1}", 400, "logprobs", "logprobs must be in [0, 20]"),
                cmpl("{" + P + ", \"logprobs\": true}", 400, "logprobs", "must be an integer, got a boolean"),
                cmpl("{" + P + ", \"suffix\": \"x\"}", 400, "suffix", "'suffix' is not supported"),
                cmpl("{" + P + ", \"best_of\": 3}", 400, "best_of", "'best_of' other than n (1) is not supported"),
                cmpl("{" + P + ", \"guided_json\": {}}", 400, "guided_json", "is not supported"),
                // issue #30: penalties, logit_bias, min_tokens, echo
                cmpl("{" + P + ", \"presence_penalty\": 2.5}", 400, "presence_penalty", "must be in [-2, 2], got 2.5"),
                cmpl("{" + P + ", \"presence_penalty\": -2.01}", 400, "presence_penalty", "must be in [-2, 2]"),
                cmpl("{" + P + ", \"presence_penalty\": \"x\"}", 400, "presence_penalty", "must be a number"),
                cmpl("{" + P + ", \"frequency_penalty\": -3}", 400, "frequency_penalty", "must be in [-2, 2]"),
                cmpl("{" + P + ", \"frequency_penalty\": NaN}", 400, "frequency_penalty", "finite"),
                cmpl("{" + P + ", \"repetition_penalty\": 0}", 400, "repetition_penalty", "greater than zero"),
                cmpl("{" + P + ", \"repetition_penalty\": -1.2}", 400, "repetition_penalty", "greater than zero"),
                cmpl("{" + P + ", \"repetition_penalty\": true}", 400, "repetition_penalty", "must be a number"),
                cmpl("{" + P + ", \"logit_bias\": [1]}", 400, "logit_bias", "must be an object"),
                cmpl("{" + P + ", \"logit_bias\": {\"abc\": 1}}", 400, "logit_bias", "keys must be token ids"),
                cmpl("{" + P + ", \"logit_bias\": {\"1000\": 1}}", 400, "logit_bias", "outside the vocabulary"),
                cmpl("{" + P + ", \"logit_bias\": {\"-1\": 1}}", 400, "logit_bias", "outside the vocabulary"),
                cmpl("{" + P + ", \"logit_bias\": {\"5\": 101}}", 400, "logit_bias", "must be in [-100, 100]"),
                cmpl("{" + P + ", \"logit_bias\": {\"5\": \"x\"}}", 400, "logit_bias", "must be a number"),
                cmpl("{" + P + ", \"logit_bias\": " + manyBias(301) + "}", 400, "logit_bias", "at most 300"),
                cmpl("{" + P + ", \"min_tokens\": -1}", 400, "min_tokens", "at least 0"),
                cmpl("{" + P + ", \"min_tokens\": 8, \"max_tokens\": 4}", 400, "min_tokens", "max_tokens=4"),
                cmpl("{" + P + ", \"min_tokens\": 1.5}", 400, "min_tokens", "must be an integer"),
                cmpl(
                        "{" + P + ", \"min_tokens\": 2, \"stop_token_ids\": " + range(65) + "}",
                        400,
                        "min_tokens",
                        "at most 64 stop_token_ids"),
                cmpl("{" + P + ", \"echo\": 1}", 400, "echo", "must be a boolean"),
                cmpl("{" + P + ", \"bad_words\": [\"ok\", \" \"]}", 400, "bad_words", "empty word"),
                cmpl("{" + P + ", \"bad_words\": [1]}", 400, "bad_words", "a string or an array of strings"),
                cmpl("{" + P + ", \"bad_words\": " + words(65) + "}", 400, "bad_words", "at most 64"),
                // echo: max_tokens 0 scores the prompt, and only with echo
                cmpl("{" + P + ", \"max_tokens\": 0}", 400, "max_tokens", "0 only with \"echo\": true"),
                cmpl("{" + P + ", \"echo\": false, \"max_tokens\": 0}", 400, "max_tokens", "0 only with \"echo\""),
                cmpl("{" + P + ", \"echo\": true, \"max_tokens\": -1}", 400, "max_tokens", "at least 1, got -1."),
                cmpl(
                        "{" + P + ", \"echo\": true, \"max_tokens\": 0, \"min_tokens\": 1}",
                        400,
                        "min_tokens",
                        "max_tokens=0"),
                cmpl("{" + P + ", \"echo\": true, \"logprobs\": 21}", 400, "logprobs", "in [0, 20], got 21"),
                cmpl("{" + P + ", \"echo\": \"yes\", \"logprobs\": 2}", 400, "echo", "must be a boolean"),
                chat("{" + C + ", \"max_completion_tokens\": 0}", 400, "max_completion_tokens", "at least 1, got 0."),
                chat("{" + C + ", \"echo\": true, \"max_tokens\": 0}", 400, "echo", "not on chat"),
                chat(
                        "{" + C + ", \"max_completion_tokens\": 3, \"min_tokens\": 5}",
                        400,
                        "min_tokens",
                        "max_completion_tokens=3"),
                chat("{" + C + ", \"logit_bias\": {\"7\": -100.5}}", 400, "logit_bias", "[-100, 100]"),
                cmpl("{" + P + ", \"stop\": 5}", 400, "stop", "must be a string or an array of strings"),
                cmpl("{" + P + ", \"stop\": [\"a\", \"\"]}", 400, "stop", "stop cannot contain an empty string"),
                cmpl("{" + P + ", \"stop_token_ids\": [-3]}", 400, "stop_token_ids", "got -3"),
                cmpl("{" + P + ", \"stop_token_ids\": [1000]}", 400, "stop_token_ids", "in [0, 1000)"),
                cmpl("{" + P + ", \"stream\": \"yes\"}", 400, "stream", "must be a boolean"),
                cmpl(
                        "{" + P + ", \"stream_options\": {\"include_usage\": true}}",
                        400,
                        "stream_options",
                        "Stream options can only be defined when `stream=True`."),
                cmpl(
                        "{" + P + ", \"stream\": true, \"stream_options\": {\"include_usage\": 1}}",
                        400,
                        "stream_options.include_usage",
                        "'stream_options.include_usage' must be a boolean"),
                cmpl("{" + P + ", \"seed\": \"1\"}", 400, "seed", "must be an integer"),
                chat("{\"model\": \"tiny\"}", 400, "messages", "'messages' is required"),
                chat("{\"messages\": []}", 400, "messages", "at least one message"),
                chat("{\"messages\": \"hi\"}", 400, "messages", "must be an array of messages, got a string"),
                chat("{\"messages\": [\"hi\"]}", 400, "messages[0]", "'messages[0]' must be an object"),
                chat(
                        "{\"messages\": [{\"content\": \"hi\"}]}",
                        400,
                        "messages[0].role",
                        "'messages[0].role' is required"),
                chat("{\"messages\": [{\"role\": \"user\"}]}", 400, "messages[0].content", "is required"),
                chat(
                        "{\"messages\": [{\"role\": \"user\", \"content\": \"a\"}, {\"role\": \"robot\", \"content\": \"b\"}]}",
                        400,
                        "messages[1].role",
                        "must be one of system, user, assistant, tool, got 'robot'"),
                chat(
                        "{\"messages\": [{\"role\": \"user\", \"content\": 7}]}",
                        400,
                        "messages[0].content",
                        "must be a string or an array of content parts"),
                chat(
                        "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"image_url\", \"image_url\": {}}]}]}",
                        400,
                        "messages[0].content[0].type",
                        "Content part type 'image_url' is not supported"),
                chat(
                        "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\"}]}]}",
                        400,
                        "messages[0].content[0].text",
                        "is required"),
                chat(
                        "{\"model\": \"other\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}",
                        404,
                        "model",
                        "The model `other` does not exist."),
                chat(
                        "{" + C + ", \"max_completion_tokens\": 0}",
                        400,
                        "max_completion_tokens",
                        "max_completion_tokens must be at least 1"),
                chat("{" + C + ", \"logprobs\": 1}", 400, "logprobs", "'logprobs' must be a boolean"),
                chat(
                        "{" + C + ", \"top_logprobs\": 3}",
                        400,
                        "top_logprobs",
                        "when using `top_logprobs`, `logprobs` must be set to true."),
                chat(
                        "{" + C + ", \"logprobs\": true, \"top_logprobs\": 25}",
                        400,
                        "top_logprobs",
                        "top_logprobs must be in [0, 20]"),
                chat("{" + C + ", \"tool_choice\": \"required\"}", 400, "tool_choice", "`tools` must be set"),
                chat(
                        "{" + C + ", \"tool_choice\": \"auto\", \"tools\": []}",
                        400,
                        "tool_choice",
                        "`tools` must be set"),
                chat(
                        "{" + C + ", \"tool_choice\": \"always\", " + F + "}",
                        400,
                        "tool_choice",
                        "'tool_choice' must be \"none\", \"auto\", \"required\" or"),
                chat("{" + C + ", \"tool_choice\": 1, " + F + "}", 400, "tool_choice", "must be a string or an object"),
                chat(
                        "{" + C + ", \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"g\"}}, " + F
                                + "}",
                        400,
                        "tool_choice.function.name",
                        "Tool 'g' has not been passed in `tools`"),
                chat(
                        "{" + C + ", \"tool_choice\": {\"type\": \"function\", \"function\": {}}, " + F + "}",
                        400,
                        "tool_choice.function.name",
                        "is required"),
                chat(
                        "{" + C + ", \"tool_choice\": {\"type\": \"tool\"}, " + F + "}",
                        400,
                        "tool_choice.type",
                        "must be \"function\""),
                chat("{" + C + ", \"parallel_tool_calls\": \"yes\", " + F + "}", 400, "parallel_tool_calls", "boolean"),
                chat(
                        "{" + C + ", \"tool_choice\": \"none\", \"tools\": [{\"type\": \"retrieval\"}]}",
                        400,
                        "tools[0].type",
                        "must be \"function\""),
                chat(
                        "{" + C + ", \"tool_choice\": \"none\", \"tools\": [{\"type\": \"function\"}]}",
                        400,
                        "tools[0].function",
                        "must be an object"),
                chat(
                        "{\"messages\": [{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"a\", "
                                + "\"function\": {\"name\": \"f\", \"arguments\": \"{not json\"}}]}]}",
                        400,
                        "messages[0].tool_calls[0].function.arguments",
                        "is not valid JSON"),
                chat(
                        "{\"messages\": [{\"role\": \"user\", \"content\": \"x\", \"tool_calls\": [{\"id\": \"a\"}]}]}",
                        400,
                        "messages[0].tool_calls",
                        "only allowed on assistant messages"),
                chat(
                        "{\"messages\": [{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"id\": \"a\", "
                                + "\"function\": {\"arguments\": \"{}\"}}]}]}",
                        400,
                        "messages[0].tool_calls[0].function.name",
                        "is required"),
                chat(
                        "{" + C + ", \"chat_template\": \"{{ messages }}\"}",
                        400,
                        "chat_template",
                        "Refused request with untrusted chat template."),
                chat(
                        "{" + C + ", \"chat_template_kwargs\": {\"chat_template\": \"x\"}}",
                        400,
                        "chat_template",
                        "--trust-request-chat-template is not set"),
                chat("{" + C + ", \"documents\": {\"a\": 1}}", 400, "documents", "must be an array of objects"),
                chat("{" + C + ", \"functions\": [{\"name\": \"f\"}]}", 400, "functions", "is not supported"),
                chat(
                        "{" + C + ", \"response_format\": {\"type\": \"yaml\"}}",
                        400,
                        "response_format.type",
                        "must be \"text\", \"json_object\" or \"json_schema\""),
                chat("{" + C + ", \"response_format\": {}}", 400, "response_format.type", "is required"),
                chat(
                        "{" + C + ", \"response_format\": {\"type\": \"json_schema\"}}",
                        400,
                        "response_format.json_schema",
                        "is required"),
                chat(
                        "{" + C
                                + ", \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"x\"}}}",
                        400,
                        "response_format.json_schema.schema",
                        "is required"),
                chat(
                        "{" + C
                                + ", \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"schema\": 3}}}",
                        400,
                        "response_format.json_schema.schema",
                        "must be an object"),
                chat("{" + C + ", \"temperature\": -1}", 400, "temperature", "non-negative"),
                chat("{" + C + ", \"continue_final_message\": true}", 400, "continue_final_message", "Cannot set both"),
                chat("{" + C + ", \"chat_template_kwargs\": [1]}", 400, "chat_template_kwargs", "must be an object"),
                chat("{" + C + ", \"echo\": true}", 400, "echo", "is not supported"));
    }

    static String manyBias(int n) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < n; i++)
            b.append(i == 0 ? "" : ", ").append('"').append(i).append("\": 1");
        return b.append('}').toString();
    }

    static String words(int n) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < n; i++)
            b.append(i == 0 ? "" : ", ").append("\"w").append(i).append('"');
        return b.append(']').toString();
    }

    static String range(int n) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < n; i++) b.append(i == 0 ? "" : ", ").append(i);
        return b.append(']').toString();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void refused(String endpoint, String body, int status, String param, String fragment) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        OpenAiException e = catchThrowableOfType(OpenAiException.class, () -> {
            if (endpoint.equals("chat")) {
                RequestParser.parseChat(bytes, M);
            } else {
                RequestParser.parseCompletion(bytes, M);
            }
        });
        assertThat(e).as("refused").isNotNull();
        assertThat(e.status()).isEqualTo(status);
        assertThat(e.param()).isEqualTo(param);
        assertThat(e.getMessage()).contains(fragment);
        assertThat(e.type()).isEqualTo("invalid_request_error");
    }

    @Test
    void atLeastThirtyCases() {
        assertThat(cases().count()).isGreaterThanOrEqualTo(30);
    }
}
