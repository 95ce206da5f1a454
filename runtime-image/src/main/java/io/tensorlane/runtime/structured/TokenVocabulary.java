package io.tensorlane.runtime.structured;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The bytes each token id stands for, as the model's decoder writes them, and a trie over them for walking an automaton
 * over a whole vocabulary at once. Byte-level BPE (GPT-2's byte-to-unicode map: Llama 3, Qwen) and SentencePiece-style
 * vocabularies (U+2581 for a space, {@code <0xNN>} byte fallback: Llama 2, Mistral) are read from tokenizer.json; added
 * tokens stand for their content. Ids up to the model's logits size without a token, and the EOS ids (which an automaton
 * never walks; {@link TokenMasks} allows them in accepting states), have no bytes.
 */
public final class TokenVocabulary {
    private final int size;
    private final byte[][] bytes;
    private final int[] eos;
    // the trie: node 0 is the root; children as linked lists
    private int[] firstChild = new int[1024];
    private int[] nextSibling = new int[1024];
    private char[] label = new char[1024];
    private int[] firstToken = new int[1024];
    private int[] nextToken;
    private int nodes = 1;

    /**
     * @param bytes per id the token's bytes (null: none), at most {@code size} ids
     * @param eos the ids that end a sequence
     */
    public TokenVocabulary(byte[][] bytes, int size, Set<Integer> eos) {
        if (bytes.length > size) throw new IllegalArgumentException(bytes.length + " tokens > vocabulary size " + size);
        this.size = size;
        this.bytes = Arrays.copyOf(bytes, size);
        this.eos = eos.stream()
                .mapToInt(Integer::intValue)
                .filter(i -> i >= 0 && i < size)
                .sorted()
                .toArray();
        for (int e : this.eos) this.bytes[e] = null;
        nextToken = new int[size];
        Arrays.fill(firstToken, -1);
        firstChild[0] = -1;
        for (int id = 0; id < size; id++) {
            byte[] b = this.bytes[id];
            if (b == null || b.length == 0) continue;
            int n = 0;
            for (byte x : b) n = child(n, (char) (x & 0xff));
            nextToken[id] = firstToken[n];
            firstToken[n] = id;
        }
    }

    private int child(int n, char c) {
        for (int k = firstChild[n]; k >= 0; k = nextSibling[k]) if (label[k] == c) return k;
        if (nodes == label.length) {
            int cap = nodes * 2;
            firstChild = Arrays.copyOf(firstChild, cap);
            nextSibling = Arrays.copyOf(nextSibling, cap);
            label = Arrays.copyOf(label, cap);
            firstToken = Arrays.copyOf(firstToken, cap);
            Arrays.fill(firstToken, nodes, cap, -1);
        }
        int k = nodes++;
        label[k] = c;
        firstChild[k] = -1;
        nextSibling[k] = firstChild[n];
        firstChild[n] = k;
        return k;
    }

    /** Size of the logits rows (masks cover it). */
    public int size() {
        return size;
    }

    /** The token's bytes (null: none). */
    public byte[] bytes(int id) {
        return id >= 0 && id < size ? bytes[id] : null;
    }

    int[] eos() {
        return eos;
    }

    boolean isEos(int id) {
        return Arrays.binarySearch(eos, id) >= 0;
    }

    int trieNodes() {
        return nodes;
    }

    int firstChild(int n) {
        return firstChild[n];
    }

    int nextSibling(int n) {
        return nextSibling[n];
    }

    char label(int n) {
        return label[n];
    }

    int firstToken(int n) {
        return firstToken[n];
    }

    int nextToken(int id) {
        return nextToken[id];
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    /** The vocabulary of a model folder's tokenizer.json, for logits rows of {@code size}. */
    public static TokenVocabulary load(Path modelDir, int size, Set<Integer> eos) {
        JsonNode tj;
        try {
            tj = JSON.readTree(Files.readString(modelDir.resolve("tokenizer.json")));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + modelDir.resolve("tokenizer.json"), e);
        }
        return of(tj, size, eos);
    }

    /** The vocabulary of a parsed tokenizer.json. */
    public static TokenVocabulary of(JsonNode tokenizerJson, int size, Set<Integer> eos) {
        boolean byteLevel = tokenizerJson.path("decoder").toString().contains("ByteLevel")
                || tokenizerJson.path("pre_tokenizer").toString().contains("ByteLevel");
        Map<Character, Integer> unbyte = byteLevel ? unicodeToByte() : null;
        byte[][] out = new byte[size][];
        for (Map.Entry<String, JsonNode> e : (Iterable<Map.Entry<String, JsonNode>>)
                () -> tokenizerJson.path("model").path("vocab").fields()) {
            int id = e.getValue().asInt(-1);
            if (id < 0 || id >= size) continue;
            out[id] = byteLevel ? byteLevel(e.getKey(), unbyte) : sentencePiece(e.getKey());
        }
        for (JsonNode added : tokenizerJson.path("added_tokens")) {
            int id = added.path("id").asInt(-1);
            if (id >= 0 && id < size) out[id] = added.path("content").asText().getBytes(StandardCharsets.UTF_8);
        }
        return new TokenVocabulary(out, size, eos);
    }

    private static byte[] byteLevel(String token, Map<Character, Integer> unbyte) {
        byte[] b = new byte[token.length()];
        for (int i = 0; i < token.length(); i++) {
            Integer v = unbyte.get(token.charAt(i));
            if (v == null) return token.getBytes(StandardCharsets.UTF_8); // not a byte-level symbol: as written
            b[i] = (byte) (int) v;
        }
        return b;
    }

    private static byte[] sentencePiece(String token) {
        if (token.length() == 6 && token.startsWith("<0x") && token.endsWith(">")) {
            try {
                return new byte[] {(byte) Integer.parseInt(token.substring(3, 5), 16)};
            } catch (NumberFormatException e) {
                // an ordinary token that looks like one
            }
        }
        return token.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8);
    }

    /** GPT-2's bytes_to_unicode, inverted. */
    static Map<Character, Integer> unicodeToByte() {
        Map<Character, Integer> m = new HashMap<>();
        int n = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            m.put(printable ? (char) b : (char) (256 + n++), b);
        }
        return m;
    }
}
