package io.tensorlane.runtime.text;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class IncrementalDecoderTest {
    static ModelTokenizer tok;

    @BeforeAll
    static void load() {
        tok = ModelTokenizer.load(TinyBpe.dir());
    }

    @AfterAll
    static void close() {
        tok.close();
    }

    /** Streams the ids after the prompt one at a time; returns the deltas (flush last). */
    static List<String> stream(IncrementalDecoder d, int[] generated) {
        List<String> deltas = new ArrayList<>();
        for (int id : generated) {
            deltas.add(d.append(id));
        }
        deltas.add(d.flush());
        return deltas;
    }

    @Test
    void euroSplitAcrossTwoTokensIsHeldBackUntilComplete() {
        IncrementalDecoder d = tok.newDecoder(tok.encode("price:", true));
        assertThat(d.append(' ')).isEqualTo(" ");
        assertThat(d.append(TinyBpe.EURO_HEAD)).isEmpty();
        assertThat(d.append(0xac)).isEqualTo("€");
        assertThat(d.append('5')).isEqualTo("5");
        assertThat(d.flush()).isEmpty();
    }

    @Test
    void emojiOfFourByteTokensComesOutWhole() {
        IncrementalDecoder d = tok.newDecoder(new int[] {TinyBpe.BOS});
        assertThat(d.append(0xf0)).isEmpty();
        assertThat(d.append(0x9f)).isEmpty();
        assertThat(d.append(0x98)).isEmpty();
        assertThat(d.append(0x80)).isEqualTo("😀");
    }

    @Test
    void streamingReproducesTheFullDecodeAndNeverEmitsReplacementCharacters() {
        String prompt = "<|begin_of_text|>Q: ";
        for (String s : ModelTokenizerTest.corpus(300)) {
            if (s.indexOf('\uFFFD') >= 0) {
                continue;
            }
            int[] promptIds = tok.encode(prompt, false);
            int[] generated = tok.encode(s + "<|eot_id|>", false);
            List<String> deltas = stream(tok.newDecoder(promptIds), generated);
            assertThat(deltas).as("deltas of %s", s).noneMatch(x -> x.indexOf('\uFFFD') >= 0);
            assertThat(String.join("", deltas))
                    .as("stream of %s", s)
                    .isEqualTo(tok.decode(generated, true))
                    .isEqualTo(s);
        }
    }

    @Test
    void keepingSpecialTokensStreamsThemToo() {
        int[] generated = tok.encode("hello€<|eot_id|>", false);
        List<String> deltas = stream(tok.newDecoder(new int[0], false), generated);
        assertThat(String.join("", deltas)).isEqualTo("hello€<|eot_id|>");
        assertThat(deltas.get(deltas.size() - 2)).isEqualTo("<|eot_id|>");
    }

    @Test
    void incompleteBytesAtTheEndComeOutOnFlushAsInAFullDecode() {
        IncrementalDecoder d = tok.newDecoder(new int[] {TinyBpe.BOS});
        assertThat(d.append('a')).isEqualTo("a");
        assertThat(d.append(TinyBpe.EURO_HEAD)).isEmpty();
        assertThat(d.flush())
                .isEqualTo(tok.decode(new int[] {TinyBpe.EURO_HEAD}, true))
                .contains("\uFFFD");
        assertThat(d.ids()).containsExactly(TinyBpe.BOS, 'a', TinyBpe.EURO_HEAD);
    }

    @Test
    void longPromptsOnlyDecodeAWindow() {
        int[] prompt = tok.encode(String.join(" ", java.util.Collections.nCopies(2000, "hello")), true);
        int[] calls = {0};
        int[] widest = {0};
        IncrementalDecoder d = new IncrementalDecoder(
                (ids, from, to) -> {
                    calls[0]++;
                    widest[0] = Math.max(widest[0], to - from);
                    return tok.decode(ids, from, to, true);
                },
                prompt);
        StringBuilder out = new StringBuilder();
        for (int id : tok.encode(" the world", false)) {
            out.append(d.append(id));
        }
        assertThat(out.toString()).isEqualTo(" the world");
        assertThat(widest[0]).isLessThanOrEqualTo(IncrementalDecoder.INITIAL_CONTEXT + 1);
        assertThat(calls[0]).isEqualTo(4);
    }
}
