package io.tensorlane.runtime.structured;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dk.brics.automaton.Automaton;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Token masks: on the tiny byte-level fixture, every mask along a constrained answer equals the brute-force one (each
 * token's bytes walked alone); on a synthetic vocabulary of 151,936 tokens (Qwen's logits size; no tokenizer that large
 * is in the test resources) the time per token, first computations and cached, is printed and bounded.
 */
class TokenMasksTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SCHEMA =
            "{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}, \"days\":"
                    + " {\"type\": \"array\", \"items\": {\"type\": \"integer\"}}, \"unit\": {\"enum\": [\"celsius\", \"fahrenheit\"]}},"
                    + " \"required\": [\"city\", \"unit\"], \"additionalProperties\": false}";
    private static final String ANSWER = "{\"city\": \"São Paulo €\", \"days\": [1, 22, 333], \"unit\": \"celsius\"}";

    static int[] bruteForce(TokenMasks m, TokenVocabulary v, int state) {
        int[] mask = new int[m.words()];
        for (int id = 0; id < v.size(); id++) {
            int s = m.advance(state, id);
            if (s >= 0) mask[id >>> 5] |= 1 << (id & 31);
        }
        return mask;
    }

    static boolean allowed(int[] mask, int id) {
        return (mask[id >>> 5] >>> (id & 31) & 1) != 0;
    }

    @Test
    void masksAlongAnAnswerMatchBruteForceOnTheTinyTokenizer() throws Exception {
        Path dir = Path.of("src/test/resources/tokenizers/tiny-bpe");
        try (ModelTokenizer tok = ModelTokenizer.load(dir)) {
            Set<Integer> eos = new HashSet<>(tok.eosTokenIds());
            TokenVocabulary v = TokenVocabulary.load(dir, 288, eos); // logits rows wider than the vocabulary
            TokenMasks m = new TokenMasks(SchemaCompiler.compile(JSON.readTree(SCHEMA)), v);
            int[] ids = tok.encode(ANSWER, false);
            assertThat(tok.decode(ids, false)).isEqualTo(ANSWER);
            int state = m.start();
            for (int id : ids) {
                int[] mask = m.mask(state);
                assertThat(mask).isEqualTo(bruteForce(m, v, state));
                assertThat(allowed(mask, id)).as("the answer's token %d", id).isTrue();
                assertThat(allowed(mask, eos.iterator().next())).isFalse();
                state = m.advance(state, id);
            }
            assertThat(m.accepts(state)).isTrue();
            int[] end = m.mask(state);
            for (int e : eos)
                assertThat(allowed(end, e))
                        .as("EOS once the object is complete")
                        .isTrue();
            assertThat(bruteForce(m, v, state)).isEqualTo(end);
            for (int id = 0; id < 288; id++) {
                if (!eos.contains(id))
                    assertThat(allowed(end, id))
                            .as("nothing after the object but EOS")
                            .isFalse();
            }
            // "€" is two tokens, the first of them two of its three bytes: allowed inside a string only
            int euroHead = tok.encode("€", false)[0];
            assertThat(v.bytes(euroHead)).hasSize(2);
            assertThat(allowed(m.mask(m.start()), euroHead)).isFalse();
        }
    }

    /** A vocabulary like a real one: the 256 bytes, then words and pieces with and without a leading space. */
    static TokenVocabulary synthetic(int size, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[][] b = new byte[size][];
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < 256; i++) b[i] = new byte[] {(byte) i};
        String letters = "etaoinshrdlucmfwypvbgkjqxz";
        String punct = "{}[]\":, .-_0123456789'\\/";
        int id = 256;
        while (id < size - 2) {
            StringBuilder s = new StringBuilder();
            if (rnd.nextInt(3) == 0) s.append(' ');
            int len = 1 + rnd.nextInt(9);
            for (int k = 0; k < len; k++) {
                s.append(
                        rnd.nextInt(8) == 0
                                ? punct.charAt(rnd.nextInt(punct.length()))
                                : letters.charAt(
                                        Math.min(letters.length() - 1, (int) Math.abs(rnd.nextGaussian() * 8))));
            }
            if (rnd.nextInt(40) == 0) s.append("é");
            if (seen.add(s.toString())) b[id++] = s.toString().getBytes(StandardCharsets.UTF_8);
        }
        return new TokenVocabulary(b, size, Set.of(size - 1));
    }

    @Test
    void maskTimeOnAQwenSizedVocabulary() throws Exception {
        int size = 151_936;
        TokenVocabulary v = synthetic(size, 42);
        for (String schema : List.of(SCHEMA, "json_object")) {
            Automaton a = schema.equals("json_object")
                    ? SchemaCompiler.anyObject()
                    : SchemaCompiler.compile(JSON.readTree(schema));
            long t0 = System.nanoTime();
            TokenMasks m = new TokenMasks(a, v);
            long build = System.nanoTime() - t0;
            // the answer as single-byte tokens: a state per byte, the most distinct states an answer can visit
            byte[] text = ANSWER.getBytes(StandardCharsets.UTF_8);
            long cold = 0;
            long warm = 0;
            for (int pass = 0; pass < 2; pass++) {
                int state = m.start();
                for (byte x : text) {
                    long s = System.nanoTime();
                    int[] mask = m.mask(state);
                    long dt = System.nanoTime() - s;
                    if (pass == 0) cold += dt;
                    else warm += dt;
                    assertThat(allowed(mask, x & 0xff)).isTrue();
                    state = m.advance(state, x & 0xff);
                }
                assertThat(m.accepts(state)).isTrue();
            }
            int states = m.cachedStates();
            System.out.printf(
                    "token masks (%s, vocabulary %d, %d trie nodes): DFA + run table %.1f ms; %d tokens, %d distinct states: "
                            + "%.3f ms per token computed, %.4f ms per token cached%n",
                    schema.equals("json_object") ? "json_object" : "schema",
                    size,
                    v.trieNodes(),
                    build / 1e6,
                    text.length,
                    states,
                    cold / 1e6 / text.length,
                    warm / 1e6 / text.length);
            // spot-check one mid-string state against brute force on the big vocabulary
            int state = m.start();
            for (int i = 0; i < 12; i++) state = m.advance(state, text[i] & 0xff);
            assertThat(m.mask(state)).isEqualTo(bruteForce(m, v, state));
            assertThat(warm / text.length).as("a cached mask is a lookup").isLessThan(200_000L);
        }
    }
}
