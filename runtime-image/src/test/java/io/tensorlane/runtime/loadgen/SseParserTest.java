package io.tensorlane.runtime.loadgen;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SseParserTest {
    static List<String> feedAll(SseParser p, String... pieces) {
        List<String> out = new ArrayList<>();
        for (String s : pieces) {
            out.addAll(p.feed(s));
        }
        String last = p.finish();
        if (last != null) {
            out.add(last);
        }
        return out;
    }

    static Stream<Arguments> streams() {
        return Stream.of(
                Arguments.of("one event", new String[] {"data: {\"a\":1}\n\n"}, List.of("{\"a\":1}")),
                Arguments.of(
                        "two events and DONE",
                        new String[] {"data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n"},
                        List.of("{\"a\":1}", "{\"a\":2}", "[DONE]")),
                Arguments.of(
                        "split mid-line across reads",
                        new String[] {"da", "ta: {\"te", "xt\":\"hi\"}", "\n", "\nda", "ta: [DONE]\n\n"},
                        List.of("{\"text\":\"hi\"}", "[DONE]")),
                Arguments.of(
                        "multi-line data joined with newline",
                        new String[] {"data: {\"a\":\ndata: 1}\n\n"},
                        List.of("{\"a\":\n1}")),
                Arguments.of(
                        "CRLF and CR line ends",
                        new String[] {"data: x\r\n\r\ndata: y\r\rdata: z\r", "\n\r\n"},
                        List.of("x", "y", "z")),
                Arguments.of(
                        "CR at the end of one read, LF at the start of the next",
                        new String[] {"data: x\r", "\n\r", "\n"},
                        List.of("x")),
                Arguments.of(
                        "comments and other fields ignored",
                        new String[] {": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: x\n\n"},
                        List.of("x")),
                Arguments.of("no space after the colon", new String[] {"data:x\n\n"}, List.of("x")),
                Arguments.of("only the first space is stripped", new String[] {"data:  x\n\n"}, List.of(" x")),
                Arguments.of("empty data line is an event with empty data", new String[] {"data\n\n"}, List.of("")),
                Arguments.of("blank lines without data dispatch nothing", new String[] {"\n\n\n"}, List.of()),
                Arguments.of(
                        "last event without trailing blank line",
                        new String[] {"data: a\n\ndata: [DONE]"},
                        List.of("a", "[DONE]")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("streams")
    void framesEvents(String name, String[] pieces, List<String> expected) {
        assertThat(feedAll(new SseParser(), pieces)).containsExactlyElementsOf(expected);
    }

    @Test
    void lineApiDispatchesOnTheBlankLine() {
        SseParser p = new SseParser();
        assertThat(p.line("data: {\"x\":")).isNull();
        assertThat(p.line("data: 2}")).isNull();
        assertThat(p.line("")).isEqualTo("{\"x\":\n2}");
        assertThat(p.line("")).isNull();
        assertThat(p.finish()).isNull();
    }
}
