package io.tensorlane.runtime.text;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.OptionalInt;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelTokenizerTest {
    static ModelTokenizer tok;

    @BeforeAll
    static void load() {
        tok = ModelTokenizer.load(TinyBpe.dir());
    }

    @AfterAll
    static void close() {
        tok.close();
    }

    /** Deterministic strings over ASCII, whitespace runs, emoji (with ZWJ), CJK, combining marks, Hebrew and Arabic. */
    static List<String> corpus(int count) {
        int[][] ranges = {
            {0x20, 0x7e},
            {0x20, 0x20},
            {0x09, 0x0a},
            {0x0d, 0x0d},
            {0x1f600, 0x1f64f},
            {0x1f300, 0x1f5ff},
            {0x4e00, 0x9fff},
            {0x3040, 0x30ff},
            {0x0300, 0x036f},
            {0x05d0, 0x05ea},
            {0x0627, 0x064a},
            {0x20ac, 0x20ac},
            {0x00a0, 0x00ff},
            {0x200d, 0x200d},
            {0xac00, 0xd7a3}
        };
        SplittableRandom rng = new SplittableRandom(20261130);
        List<String> out = new ArrayList<>(List.of(
                "",
                " ",
                "  ",
                "\t\t\n",
                "hello world",
                "a   b",
                "€",
                "😀",
                "👩‍💻",
                "e\u0301",
                "שלום עולם",
                "مرحبا بالعالم",
                "你好，世界",
                "x\r\ny",
                "   leading and trailing   ",
                "<|not_special|>"));
        while (out.size() < count) {
            StringBuilder sb = new StringBuilder();
            int len = rng.nextInt(1, 40);
            int[] range = ranges[rng.nextInt(ranges.length)];
            for (int i = 0; i < len; i++) {
                if (rng.nextInt(4) == 0) {
                    range = ranges[rng.nextInt(ranges.length)];
                }
                sb.appendCodePoint(rng.nextInt(range[0], range[1] + 1));
            }
            out.add(sb.toString());
        }
        return out;
    }

    @Test
    void decodeOfEncodeIsTheIdentity() {
        List<String> strings = corpus(400);
        for (String s : strings) {
            assertThat(tok.decode(tok.encode(s, false), false))
                    .as("round trip of %s", s)
                    .isEqualTo(s);
            assertThat(tok.decode(tok.encode(s, true), true))
                    .as("round trip with BOS of %s", s)
                    .isEqualTo(s);
        }
    }

    @Test
    void mergesGiveTheExpectedIds() {
        assertThat(tok.encode("hello world", false)).containsExactly(TinyBpe.HELLO, TinyBpe.SPACE_WORLD);
        assertThat(tok.encode(" the", false)).containsExactly(TinyBpe.THE);
        assertThat(tok.encode("the", false)).containsExactly('t', 257);
        assertThat(tok.encode("hello hello", false)).containsExactly(TinyBpe.HELLO, TinyBpe.SPACE_HELLO);
        // GPT-2's pre-tokenizer regex leaves the last space of a run to the next word
        assertThat(tok.encode("a   b", false)).containsExactly('a', TinyBpe.TWO_SPACES, ' ', 'b');
        // E2 82 AC: the first two bytes are merged, the last one is a byte token (0xAC)
        assertThat(tok.encode("€", false)).containsExactly(TinyBpe.EURO_HEAD, 0xac);
        assertThat(tok.encode("😀", false)).containsExactly(0xf0, 0x9f, 0x98, 0x80);
    }

    @Test
    void addSpecialTokensPrependsBos() {
        assertThat(tok.encode("hello world", true)).containsExactly(TinyBpe.BOS, TinyBpe.HELLO, TinyBpe.SPACE_WORLD);
        assertThat(tok.encode("", true)).containsExactly(TinyBpe.BOS);
        assertThat(tok.encode("", false)).isEmpty();
    }

    @Test
    void specialTokensInTheTextAreSingleIds() {
        String text = "<|begin_of_text|>hello<|eot_id|>";
        assertThat(tok.encode(text, false)).containsExactly(TinyBpe.BOS, TinyBpe.HELLO, TinyBpe.EOT);
        assertThat(tok.encode(text, true)).containsExactly(TinyBpe.BOS, TinyBpe.BOS, TinyBpe.HELLO, TinyBpe.EOT);
        assertThat(tok.decode(tok.encode(text, true), true)).isEqualTo("hello");
        assertThat(tok.decode(tok.encode(text, false), false)).isEqualTo(text);
    }

    @Test
    void longInputsAreNotTruncated() {
        String text = String.join(" ", Collections.nCopies(5000, "hello"));
        int[] ids = tok.encode(text, true);
        assertThat(ids).hasSize(5001);
        assertThat(ids[0]).isEqualTo(TinyBpe.BOS);
        assertThat(ids[5000]).isEqualTo(TinyBpe.SPACE_HELLO);
        assertThat(tok.decode(ids, true)).isEqualTo(text);
    }

    @Test
    void vocabularyAndConfigFacts() {
        assertThat(tok.vocabSize()).isEqualTo(277);
        assertThat(tok.tokenId("Ġworld")).isEqualTo(OptionalInt.of(TinyBpe.SPACE_WORLD));
        assertThat(tok.tokenId("<|eot_id|>")).isEqualTo(OptionalInt.of(TinyBpe.EOT));
        assertThat(tok.tokenId("nope")).isEmpty();
        assertThat(tok.chatTemplate()).contains("add_generation_prompt").contains("<|start_header_id|>");
        assertThat(tok.bosToken()).isEqualTo("<|begin_of_text|>");
        assertThat(tok.eosToken()).isEqualTo("<|eot_id|>");
        assertThat(tok.addBosToken()).contains(true);
        assertThat(tok.bosTokenId()).isEqualTo(OptionalInt.of(TinyBpe.BOS));
        // generation_config's list; tokenizer_config's eos_token (<|eot_id|>) is already in it
        assertThat(tok.eosTokenIds()).containsExactly(TinyBpe.END_OF_TEXT, TinyBpe.EOT);
    }

    static Path modelWith(Path dir, String file, String json) throws IOException {
        Files.copy(TinyBpe.dir().resolve("tokenizer.json"), dir.resolve("tokenizer.json"));
        if (file != null) {
            Files.writeString(dir.resolve(file), json);
        }
        return dir;
    }

    @Test
    void eosFromConfigJsonInt(@TempDir Path dir) throws IOException {
        try (ModelTokenizer t =
                ModelTokenizer.load(modelWith(dir, "config.json", "{\"eos_token_id\": 275, \"bos_token_id\": 274}"))) {
            assertThat(t.eosTokenIds()).containsExactly(TinyBpe.END_OF_TEXT);
            assertThat(t.bosTokenId()).isEqualTo(OptionalInt.of(TinyBpe.BOS));
            assertThat(t.chatTemplate()).isNull();
        }
    }

    @Test
    void eosFromTokenizerConfigString(@TempDir Path dir) throws IOException {
        try (ModelTokenizer t = ModelTokenizer.load(modelWith(
                dir,
                "tokenizer_config.json",
                "{\"eos_token\": \"<|end_of_text|>\", \"bos_token\": {\"content\": \"<|begin_of_text|>\"}}"))) {
            assertThat(t.eosTokenIds()).containsExactly(TinyBpe.END_OF_TEXT);
            assertThat(t.bosTokenId()).isEqualTo(OptionalInt.of(TinyBpe.BOS));
            assertThat(t.addBosToken()).isEmpty();
        }
    }

    @Test
    void eosUnionKeepsOrderWithoutRepeats(@TempDir Path dir) throws IOException {
        modelWith(dir, "generation_config.json", "{\"eos_token_id\": [276, 276], \"bos_token_id\": null}");
        Files.writeString(dir.resolve("config.json"), "{\"eos_token_id\": [275, 276]}");
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"eos_token\": {\"content\": \"<|eot_id|>\"}}");
        try (ModelTokenizer t = ModelTokenizer.load(dir)) {
            assertThat(t.eosTokenIds()).containsExactly(TinyBpe.EOT, TinyBpe.END_OF_TEXT);
            assertThat(t.bosTokenId()).isEmpty();
        }
    }

    @Test
    void noConfigsNoSpecialIds(@TempDir Path dir) throws IOException {
        try (ModelTokenizer t = ModelTokenizer.load(modelWith(dir, null, null))) {
            assertThat(t.eosTokenIds()).isEmpty();
            assertThat(t.bosTokenId()).isEmpty();
            assertThat(t.encode("hello", false)).containsExactly(TinyBpe.HELLO);
        }
    }

    @Test
    void missingTokenizerJsonNamesThePath(@TempDir Path dir) {
        assertThatThrownBy(() -> ModelTokenizer.load(dir))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(dir.resolve("tokenizer.json").toString());
    }

    @Test
    void brokenConfigIsAClearError(@TempDir Path dir) throws IOException {
        modelWith(dir, "config.json", "{not json");
        assertThatThrownBy(() -> ModelTokenizer.load(dir))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("config.json");
    }
}
