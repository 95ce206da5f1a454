package io.tensorlane.runtime.text;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * Whether a draft model's tokenizer is its target's, as draft-model speculation needs: the draft reads the target's
 * token ids and its guesses go to the target as ids, so every id must name the same token in both. Compared: the id →
 * token map of each {@code tokenizer.json} (its model's vocabulary, BPE / WordPiece's token → id object or Unigram's
 * list of [token, score], and its added tokens). Merges and pre-tokenizers are not compared: the draft never tokenizes
 * text. Pure apart from reading the two files.
 */
public final class TokenizerMatch {
    private TokenizerMatch() {}

    /**
     * Why the tokenizer of {@code draft} (a model directory) is not that of {@code target}, naming the first id that
     * differs; null when every id names the same token in both.
     */
    public static String problem(Path target, Path draft) {
        Map<Integer, String> t = ids(target);
        Map<Integer, String> d = ids(draft);
        if (t == null || d == null) {
            return "no tokenizer.json in " + (t == null ? target : draft)
                    + ": a draft model's tokenizer must be compared with its target's";
        }
        for (Map.Entry<Integer, String> e : t.entrySet()) {
            String other = d.get(e.getKey());
            if (!e.getValue().equals(other)) {
                return "id " + e.getKey() + " is " + quote(e.getValue()) + " in the target's tokenizer and "
                        + (other == null ? "missing" : quote(other)) + " in the draft's (" + t.size() + " vs "
                        + d.size() + " ids): the draft model needs the target's tokenizer";
            }
        }
        if (d.size() != t.size()) {
            int extra = d.keySet().stream()
                    .filter(k -> !t.containsKey(k))
                    .findFirst()
                    .orElse(-1);
            return "the draft's tokenizer has " + d.size() + " ids, the target's " + t.size() + " (id " + extra
                    + " is the draft's only): the draft model needs the target's tokenizer";
        }
        return null;
    }

    /** The id → token map of {@code dir}'s tokenizer.json; null when there is none. */
    static Map<Integer, String> ids(Path dir) {
        Path file = dir.resolve("tokenizer.json");
        if (!Files.isRegularFile(file)) {
            return null;
        }
        JsonNode root = ModelFiles.optional(file);
        Map<Integer, String> out = new TreeMap<>();
        JsonNode vocab = root.path("model").path("vocab");
        if (vocab.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = vocab.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                out.put(e.getValue().asInt(), e.getKey());
            }
        } else if (vocab.isArray()) { // Unigram: [[token, score], ...], the id is the index
            for (int i = 0; i < vocab.size(); i++) {
                out.put(i, vocab.get(i).path(0).asText());
            }
        }
        for (JsonNode a : root.path("added_tokens")) {
            if (a.has("id")) {
                out.put(a.get("id").asInt(), a.path("content").asText());
            }
        }
        return out;
    }

    private static String quote(String s) {
        return ModelFiles.JSON.valueToTree(s).toString();
    }
}
