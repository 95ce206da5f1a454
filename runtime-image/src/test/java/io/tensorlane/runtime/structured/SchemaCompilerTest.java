package io.tensorlane.runtime.structured;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dk.brics.automaton.Automaton;
import dk.brics.automaton.RunAutomaton;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The schema compiler: a table of schemas with texts that must and must not be accepted, refusals, random texts. */
class SchemaCompilerTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    static boolean accepts(Automaton a, String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append((char) (x & 0xff));
        return a.run(s.toString());
    }

    static Stream<Arguments> table() {
        String person = "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}, \"age\": {\"type\": "
                + "\"integer\"}, \"tags\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"maxItems\": 2}}, "
                + "\"required\": [\"name\"], \"additionalProperties\": false}";
        return Stream.of(
                Arguments.of(
                        person,
                        List.of(
                                "{\"name\": \"Ann\"}",
                                "{\"name\":\"Ann\",\"age\":42}",
                                "{\"name\": \"Zoë\", \"age\": -3, \"tags\": [\"a\", \"b\"]}",
                                "{\"name\": \"a\\\"b\\u00e9\"}",
                                "{\"name\": \"x\", \"tags\": []}"),
                        List.of(
                                "{}",
                                "{\"age\": 1}",
                                "{\"age\": 1, \"name\": \"a\"}",
                                "{\"name\": \"a\", \"x\": 1}",
                                "{\"name\": 1}",
                                "{\"name\": \"a\", \"age\": 1.5}",
                                "{\"name\": \"a\", \"tags\": [\"a\", \"b\", \"c\"]}",
                                "{\"name\": \"a\"",
                                "{\"name\": \"a\"} ",
                                "{\"name\": \"a\\q\"}",
                                "{\"name\":  \"a\"}",
                                "{\"name\": \"a\", \"age\": 01}")),
                Arguments.of(
                        "{\"enum\": [\"red\", 3, null, {\"a\": [1]}]}",
                        List.of("\"red\"", "3", "null", "{\"a\": [1]}"),
                        List.of("\"blue\"", "\"Red\"", "3.0", "{\"a\":[1, 2]}")),
                Arguments.of("{\"const\": \"é\"}", List.of("\"é\""), List.of("\"e\"", "\"\\u00e9\"")),
                Arguments.of(
                        "{\"type\": [\"number\", \"null\"]}",
                        List.of("1", "-0.5", "2e10", "1.25E-3", "null"),
                        List.of("\"1\"", ".5", "1.", "+1", "NaN", "true")),
                Arguments.of("{\"type\": \"boolean\"}", List.of("true", "false"), List.of("True", "1", "null")),
                Arguments.of(
                        "{\"anyOf\": [{\"type\": \"string\", \"maxLength\": 2}, {\"type\": \"integer\"}]}",
                        List.of("\"ab\"", "\"é\"", "\"\"", "7"),
                        List.of("\"abc\"", "1.5", "[]")),
                Arguments.of(
                        "{\"type\": \"string\", \"minLength\": 2}",
                        List.of("\"ab\"", "\"éé\"", "\"\\n\\t\""),
                        List.of("\"a\"", "\"é\"")),
                Arguments.of(
                        "{\"type\": \"array\", \"items\": {\"type\": \"integer\"}, \"minItems\": 1}",
                        List.of("[1]", "[1, 2,3]"),
                        List.of("[]", "[1,]", "[1 ,2]")),
                Arguments.of(
                        "{\"type\": \"object\", \"additionalProperties\": {\"type\": \"integer\"}}",
                        List.of("{}", "{\"a\": 1, \"b\": 2}"),
                        List.of("{\"a\": \"x\"}")),
                Arguments.of(
                        "{\"$defs\": {\"P\": {\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"number\"}}, \"required\": [\"x\"]}},"
                                + " \"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/P\"}}",
                        List.of("[{\"x\": 1}, {\"x\": 2.5}]", "[]"),
                        List.of("[{}]", "[{\"x\": \"1\"}]")),
                Arguments.of(
                        "{}",
                        List.of("{\"a\": [1, {\"b\": null}]}", "\"s\"", "12", "[]"),
                        List.of("{a: 1}", "[1,]", "")),
                Arguments.of(
                        "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, \"b\": {\"type\": \"integer\"}, "
                                + "\"c\": {\"type\": \"integer\"}}, \"required\": [\"b\"]}",
                        List.of(
                                "{\"b\": 1}",
                                "{\"a\": 1, \"b\": 2}",
                                "{\"b\": 2, \"c\": 3}",
                                "{\"a\": 1, \"b\": 2, \"c\": 3}"),
                        List.of(
                                "{\"a\": 1}",
                                "{, \"b\": 1}",
                                "{\"b\": 1,}",
                                "{\"a\": 1 \"b\": 2}",
                                "{\"a\": 1, \"c\": 3}")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void acceptsWhatTheSchemaAllows(String schema, List<String> good, List<String> bad) throws Exception {
        Automaton a = SchemaCompiler.compile(JSON.readTree(schema));
        for (String g : good) assertThat(accepts(a, g)).as("accepts %s", g).isTrue();
        for (String b : bad) assertThat(accepts(a, b)).as("refuses %s", b).isFalse();
    }

    @Test
    void jsonObjectIsAnyObject() {
        Automaton a = SchemaCompiler.anyObject();
        assertThat(accepts(a, "{}")).isTrue();
        assertThat(accepts(a, "{\"a\": {\"b\": [1, \"x\", true, null, -2.5e3]}}"))
                .isTrue();
        assertThat(accepts(a, "[1]")).isFalse();
        assertThat(accepts(a, "\"x\"")).isFalse();
        assertThat(accepts(a, "{\"a\": 1")).isFalse();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void refusesWhatItCannotGuarantee(String schema, String message) {
        assertThatThrownBy(() -> SchemaCompiler.compile(JSON.readTree(schema)))
                .isInstanceOf(SchemaException.class)
                .hasMessageContaining(message);
    }

    static Stream<Arguments> refusals() {
        return Stream.of(
                Arguments.of("{\"type\": \"string\", \"pattern\": \"^a+$\"}", "$: 'pattern' is not supported"),
                Arguments.of("{\"type\": \"integer\", \"minimum\": 3}", "'minimum' is not supported"),
                Arguments.of(
                        "{\"properties\": {\"d\": {\"type\": \"string\", \"format\": \"date\"}}}",
                        "$.properties.d: 'format'"),
                Arguments.of("{\"oneOf\": [{\"type\": \"string\"}]}", "'oneOf' is not supported"),
                Arguments.of("{\"type\": \"decimal\"}", "unknown type 'decimal'"),
                Arguments.of(
                        "{\"$ref\": \"#/$defs/N\", \"$defs\": {\"N\": {\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/N\"}}}}",
                        "recursive"),
                Arguments.of("{\"$ref\": \"#/$defs/missing\"}", "cannot resolve"),
                Arguments.of(
                        "{\"type\": \"object\", \"properties\": {}, \"required\": [\"x\"]}",
                        "'x' is required but not in properties"));
    }

    /** Random walks through the automaton: every text it accepts parses as JSON and has the schema's shape. */
    @Test
    void everyAcceptedTextIsJsonOfTheSchema() throws Exception {
        JsonNode schema = JSON.readTree(
                "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"integer\"}, \"tags\": {\"type\":"
                        + " \"array\", \"items\": {\"enum\": [\"a\", \"b\"]}}, \"meta\": {}}, \"required\": [\"id\", \"meta\"]}");
        RunAutomaton run = new RunAutomaton(SchemaCompiler.compile(schema), true);
        SplittableRandom rnd = new SplittableRandom(7);
        for (int i = 0; i < 100; i++) {
            String text = walk(run, rnd);
            JsonNode v = JSON.readTree(text.getBytes(StandardCharsets.ISO_8859_1));
            assertThat(v.get("id").isIntegralNumber()).as(text).isTrue();
            assertThat(v.has("meta")).as(text).isTrue();
            v.path("tags").forEach(t -> assertThat(t.asText()).isIn("a", "b"));
        }
    }

    /** A random accepted string (chars are bytes), stopping at an accepting state with some probability. */
    static String walk(RunAutomaton run, SplittableRandom rnd) {
        StringBuilder s = new StringBuilder();
        int state = run.getInitialState();
        for (int steps = 0; ; steps++) {
            List<Character> next = new ArrayList<>();
            for (char c = 0; c < 256; c++) {
                int t = run.step(state, c);
                if (t >= 0) next.add(c); // no dead states: every live state can still finish
            }
            if (run.isAccept(state) && (next.isEmpty() || rnd.nextInt(steps > 200 ? 2 : 10) == 0)) return s.toString();
            // prefer structure over long strings and numbers
            char c = steps > 200 && next.contains('"')
                    ? '"'
                    : steps > 200 && next.contains('}') ? '}' : next.get(rnd.nextInt(next.size()));
            s.append(c);
            state = run.step(state, c);
        }
    }

    /**
     * A string character is exactly one well-formed UTF-8 character: every lead byte from 0x80 with every second byte,
     * padded with continuation bytes to 2, 3 and 4 bytes, is accepted as a one-character string exactly when a strict
     * UTF-8 decoder reads it as one code point (a random model found overlong forms and surrogates that decoded to
     * U+FFFD and broke maxLength).
     */
    @Test
    void stringCharactersAreWellFormedUtf8() throws Exception {
        RunAutomaton one = new RunAutomaton(SchemaCompiler.stringBody(1, 1));
        java.nio.charset.CharsetDecoder strict = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
                .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
        int accepted = 0;
        for (int lead = 0x80; lead < 0x100; lead++) {
            for (int second = 0; second < 0x100; second++) {
                for (int len = 2; len <= 4; len++) {
                    byte[] b = new byte[len];
                    b[0] = (byte) lead;
                    b[1] = (byte) second;
                    for (int k = 2; k < len; k++) b[k] = (byte) 0x80;
                    boolean valid;
                    try {
                        String cs = strict.decode(java.nio.ByteBuffer.wrap(b)).toString();
                        valid = cs.codePointCount(0, cs.length()) == 1;
                    } catch (java.nio.charset.CharacterCodingException e) {
                        valid = false;
                    }
                    StringBuilder text = new StringBuilder("\"");
                    for (byte x : b) text.append((char) (x & 0xff));
                    text.append('"');
                    assertThat(one.run(text.toString()))
                            .as("bytes %02x %02x, %d long", lead, second, len)
                            .isEqualTo(valid);
                    accepted += valid ? 1 : 0;
                }
            }
        }
        assertThat(accepted)
                .as("30 two-byte leads x 64, 16 three-byte x ~64, 5 four-byte x ~48")
                .isGreaterThan(2000);
    }
}
