package io.tensorlane.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tool-call parsers on whole answers (the table), and streamed: split at every character position into two deltas,
 * and one character per delta, the content sent plus the finish give the same content and calls.
 */
class ToolCallFormatTest {
    private static ToolCallOutput.Call c(String name, String args) {
        return new ToolCallOutput.Call(name, args);
    }

    private static final String PARIS = "{\"city\": \"Paris\", \"days\": [1, 2.5]}";

    /** format, answer, expected content, expected calls. */
    static Stream<Arguments> table() {
        return Stream.of(
                // Hermes (Qwen2.5 / Qwen3)
                Arguments.of("hermes", "Just text.", "Just text.", List.of()),
                Arguments.of(
                        "hermes",
                        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2.5]}}"
                                + "\n</tool_call>",
                        "",
                        List.of(c("get_weather", PARIS))),
                Arguments.of(
                        "hermes",
                        "Let me check.\n<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
                                + "<tool_call>\n{\"name\": \"b\", \"arguments\": {\"x\": \"é\"}}\n</tool_call>",
                        "Let me check.\n\n",
                        List.of(c("a", "{}"), c("b", "{\"x\": \"é\"}"))),
                Arguments.of(
                        "hermes",
                        "<tool_call>\n{\"name\": \"a\", \"arguments\": {bad json}\n</tool_call>",
                        "<tool_call>\n{\"name\": \"a\", \"arguments\": {bad json}\n</tool_call>",
                        List.of()),
                Arguments.of(
                        "hermes",
                        "<tool_call>\n{\"arguments\": {}}\n</tool_call>",
                        "<tool_call>\n{\"arguments\": {}}\n</tool_call>",
                        List.of()),
                Arguments.of(
                        "hermes",
                        "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}",
                        "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}",
                        List.of()),
                Arguments.of("hermes", "use <tools> and <tool_ here", "use <tools> and <tool_ here", List.of()),
                // Llama 3.x JSON
                Arguments.of(
                        "llama3_json",
                        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": [1, 2.5]}}",
                        "",
                        List.of(c("get_weather", PARIS))),
                Arguments.of(
                        "llama3_json",
                        "<|python_tag|>{\"name\": \"a\", \"arguments\": {\"k\": null}}; {\"name\": \"b\", \"parameters\": {}}",
                        "",
                        List.of(c("a", "{\"k\": null}"), c("b", "{}"))),
                Arguments.of("llama3_json", "  Paris is sunny.", "  Paris is sunny.", List.of()),
                Arguments.of("llama3_json", "{\"answer\": 42}", "{\"answer\": 42}", List.of()),
                Arguments.of(
                        "llama3_json",
                        "{\"name\": \"a\", \"parameters\": {}} and more",
                        "{\"name\": \"a\", \"parameters\": {}} and more",
                        List.of()),
                Arguments.of(
                        "llama3_json",
                        "{\"name\": \"a\", \"parameters\": {",
                        "{\"name\": \"a\", \"parameters\": {",
                        List.of()),
                // Mistral
                Arguments.of(
                        "mistral",
                        "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2.5]}}]",
                        "",
                        List.of(c("get_weather", PARIS))),
                Arguments.of(
                        "mistral",
                        "Checking. [TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}, {\"name\": \"b\", \"arguments\": {\"n\": 1}}]",
                        "Checking. ",
                        List.of(c("a", "{}"), c("b", "{\"n\": 1}"))),
                Arguments.of(
                        "mistral",
                        "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}] trailing",
                        "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {}}] trailing",
                        List.of()),
                Arguments.of("mistral", "[TOOL_CALLS] not json", "[TOOL_CALLS] not json", List.of()),
                Arguments.of("mistral", "A [TOOL list", "A [TOOL list", List.of()));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("table")
    void parsesWholeAnswers(String format, String answer, String content, List<ToolCallOutput.Call> calls) {
        ToolCallOutput out = ToolCallFormat.named(format).parse(answer);
        assertThat(out.content()).isEqualTo(content);
        assertThat(out.calls()).isEqualTo(calls);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("table")
    void streamsToTheSameResultAtEverySplit(
            String format, String answer, String content, List<ToolCallOutput.Call> calls) {
        for (int cut = 0; cut <= answer.length(); cut++) {
            check(format, List.of(answer.substring(0, cut), answer.substring(cut)), content, calls);
        }
        List<String> chars = new ArrayList<>();
        answer.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
        check(format, chars, content, calls);
    }

    /** The client's view of a stream: content and the calls assembled from their pieces (as openai's helpers do). */
    record Assembled(String content, List<ToolCallOutput.Call> calls, int argumentPieces) {}

    static Assembled assemble(List<ToolCallStream.Delta> deltas) {
        StringBuilder content = new StringBuilder();
        List<String> names = new ArrayList<>();
        List<StringBuilder> args = new ArrayList<>();
        int pieces = 0;
        for (ToolCallStream.Delta d : deltas) {
            content.append(d.content());
            for (ToolCallStream.CallDelta c : d.calls()) {
                if (c.index() == names.size()) {
                    assertThat(c.id())
                            .as("the first piece of a call has its id")
                            .isNotBlank();
                    assertThat(c.name()).as("and its name").isNotNull();
                    names.add(c.name());
                    args.add(new StringBuilder());
                } else {
                    assertThat(c.index()).as("pieces of calls already opened").isLessThan(names.size());
                    assertThat(c.id()).as("the id only in the first piece").isNull();
                    assertThat(c.name()).as("the name only in the first piece").isNull();
                }
                if (!c.arguments().isEmpty()) pieces++;
                args.get(c.index()).append(c.arguments());
            }
        }
        List<ToolCallOutput.Call> calls = new ArrayList<>();
        for (int i = 0; i < names.size(); i++)
            calls.add(c(names.get(i), args.get(i).toString()));
        return new Assembled(content.toString(), calls, pieces);
    }

    private static Assembled stream(String format, List<String> deltas, int maxCalls) {
        int[] n = {0};
        ToolCallStream s = new ToolCallStream(ToolCallFormat.named(format), maxCalls, () -> "call" + n[0]++);
        List<ToolCallStream.Delta> out = new ArrayList<>();
        StringBuilder sent = new StringBuilder();
        for (String d : deltas) {
            ToolCallStream.Delta x = s.push(d);
            sent.append(x.content());
            out.add(x);
        }
        out.add(s.finish());
        return assemble(out);
    }

    private static void check(String format, List<String> deltas, String content, List<ToolCallOutput.Call> calls) {
        ToolCallStream s = new ToolCallStream(ToolCallFormat.named(format), Integer.MAX_VALUE, () -> "id");
        StringBuilder sent = new StringBuilder();
        List<ToolCallStream.Delta> out = new ArrayList<>();
        for (String d : deltas) {
            ToolCallStream.Delta x = s.push(d);
            out.add(x);
            sent.append(x.content());
            assertThat(content)
                    .as("%s: content sent early must be final", deltas)
                    .startsWith(sent.toString());
        }
        out.add(s.finish());
        Assembled a = assemble(out);
        assertThat(a.content()).as("%s", deltas).isEqualTo(content);
        if (!calls.isEmpty()) {
            assertThat(a.calls()).as("%s", deltas).isEqualTo(calls);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streamedCalls")
    void argumentsStreamInPiecesThatAddUpToTheWholeParse(String format, String answer) {
        List<String> chars = new ArrayList<>();
        answer.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
        Assembled a = stream(format, chars, Integer.MAX_VALUE);
        ToolCallOutput whole = ToolCallFormat.named(format).parse(answer);
        assertThat(a.calls()).isEqualTo(whole.calls()).isNotEmpty();
        assertThat(a.content()).isEqualTo(whole.content());
        assertThat(a.argumentPieces())
                .as("arguments come in pieces while the model writes them")
                .isGreaterThan(2 * whole.calls().size());
    }

    static Stream<Arguments> streamedCalls() {
        return Stream.of(
                Arguments.of(
                        "hermes",
                        "Sure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\",\"days\":[1,2.50,"
                                + "1e2],\"q\":\"a\\u00e9\\n\\\"b\",\"ok\":true,\"n\":null,\"o\":{}}}\n</tool_call>\n<tool_call>\n"
                                + "{\"name\": \"b\", \"arguments\": {\"x\": [ ]}}\n</tool_call>"),
                Arguments.of(
                        "llama3_json",
                        "<|python_tag|>{\"name\": \"a\", \"parameters\": {\"k\": -0.5}}; {\"name\": \"b\", \"parameters\": {\"s\": \"x y\"}}"),
                Arguments.of(
                        "mistral",
                        "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"n\": 12}}, {\"name\": \"b\", \"arguments\": {\"m\": [1,2]}}]"));
    }

    @org.junit.jupiter.api.Test
    void parallelCallsOffKeepsTheFirstCall() {
        String answer = "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n<tool_call>\n"
                + "{\"name\": \"b\", \"arguments\": {}}\n</tool_call>";
        for (int cut = 0; cut <= answer.length(); cut++) {
            Assembled a = stream("hermes", List.of(answer.substring(0, cut), answer.substring(cut)), 1);
            assertThat(a.calls()).containsExactly(c("a", "{\"x\": 1}"));
        }
    }

    @org.junit.jupiter.api.Test
    void aCallThatBreaksAfterOpeningEndsAsContent() {
        String answer = "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1, oops}}\n</tool_call>";
        List<String> chars = new ArrayList<>();
        answer.codePoints().forEach(cp -> chars.add(new String(Character.toChars(cp))));
        Assembled a = stream("hermes", chars, Integer.MAX_VALUE);
        assertThat(a.content()).isEqualTo(answer);
        assertThat(a.calls()).extracting(ToolCallOutput.Call::name).containsExactly("a");
        assertThat(a.calls().get(0).arguments()).isEqualTo("{\"x\": 1, ");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("plainText")
    void plainTextStreamsWithoutWaiting(String format, String text, int sentBeforeEnd) {
        ToolCallStream s = new ToolCallStream(ToolCallFormat.named(format), Integer.MAX_VALUE, () -> "id");
        assertThat(s.push(text).content()).hasSize(sentBeforeEnd);
    }

    static Stream<Arguments> plainText() {
        return Stream.of(
                Arguments.of("hermes", "Hello there ", 11), // trailing whitespace waits
                Arguments.of("hermes", "Hello <tool", 5),
                Arguments.of("mistral", "Hello [TOOL_CA", 5),
                Arguments.of("llama3_json", "Hello", 5),
                Arguments.of("llama3_json", " {\"name\"", 0));
    }

    @org.junit.jupiter.api.Test
    void unknownFormatsAreRefused() {
        assertThatThrownBy(() -> ToolCallFormat.named("pythonic"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hermes, llama3_json, mistral");
    }
}
