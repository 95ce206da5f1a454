package io.tensorlane.runtime.text;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** A draft model's tokenizer against its target's ({@link TokenizerMatch}): the same id → token map, or why not. */
class TokenizerMatchTest {
    static final String BPE = """
      {"version": "1.0", "added_tokens": [{"id": 3, "content": "<|end|>", "special": true}],
       "pre_tokenizer": PRE, "model": {"type": "BPE", "vocab": VOCAB, "merges": MERGES}}
      """;
    static final String VOCAB = "{\"a\": 0, \"b\": 1, \"ab\": 2}";

    static String bpe(String vocab, String pre, String merges) {
        return BPE.replace("VOCAB", vocab).replace("PRE", pre).replace("MERGES", merges);
    }

    static Stream<Arguments> cases() {
        String same = bpe(VOCAB, "null", "[\"a b\"]");
        return Stream.of(
                Arguments.of("the same file", same, same, null),
                Arguments.of(
                        "other merges and pre-tokenizer, the same ids",
                        same,
                        bpe("{\"ab\": 2, \"a\": 0, \"b\": 1}", "{\"type\": \"ByteLevel\"}", "[]"),
                        null),
                Arguments.of(
                        "an id names another token",
                        same,
                        bpe("{\"a\": 0, \"b\": 1, \"ba\": 2}", "null", "[]"),
                        "id 2 is \"ab\" in the target's tokenizer and \"ba\" in the draft's (4 vs 4 ids)"),
                Arguments.of(
                        "the draft lacks an id",
                        same,
                        bpe("{\"a\": 0, \"b\": 1}", "null", "[]"),
                        "id 2 is \"ab\" in the target's tokenizer and missing in the draft's (4 vs 3 ids)"),
                Arguments.of(
                        "the draft has more ids",
                        same,
                        bpe("{\"a\": 0, \"b\": 1, \"ab\": 2, \"c\": 4}", "null", "[]"),
                        "the draft's tokenizer has 5 ids, the target's 4 (id 4 is the draft's only)"),
                Arguments.of(
                        "an added token differs",
                        same,
                        same.replace("<|end|>", "<|eos|>"),
                        "id 3 is \"<|end|>\" in the target's tokenizer and \"<|eos|>\" in the draft's"),
                Arguments.of(
                        "unigram lists, the id is the index",
                        "{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"x\", -1.0], [\"y\", -2.0]]}}",
                        "{\"model\": {\"type\": \"Unigram\", \"vocab\": [[\"x\", -1.5], [\"z\", -2.0]]}}",
                        "id 1 is \"y\" in the target's tokenizer and \"z\" in the draft's"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void comparesTheIdsOfBothTokenizers(String name, String target, String draft, String problem, @TempDir Path dir)
            throws IOException {
        Path t = Files.createDirectory(dir.resolve("target"));
        Path d = Files.createDirectory(dir.resolve("draft"));
        Files.writeString(t.resolve("tokenizer.json"), target);
        Files.writeString(d.resolve("tokenizer.json"), draft);
        String got = TokenizerMatch.problem(t, d);
        if (problem == null) {
            assertThat(got).as(name).isNull();
        } else {
            assertThat(got).as(name).startsWith(problem).endsWith("the draft model needs the target's tokenizer");
        }
    }

    @ParameterizedTest(name = "no tokenizer.json in the {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"target", "draft"})
    void aMissingTokenizerIsNamed(String which, @TempDir Path dir) throws IOException {
        Path t = Files.createDirectory(dir.resolve("target"));
        Path d = Files.createDirectory(dir.resolve("draft"));
        Files.writeString((which.equals("target") ? d : t).resolve("tokenizer.json"), bpe(VOCAB, "null", "[]"));
        assertThat(TokenizerMatch.problem(t, d))
                .isEqualTo("no tokenizer.json in " + dir.resolve(which)
                        + ": a draft model's tokenizer must be compared with its target's");
    }
}
