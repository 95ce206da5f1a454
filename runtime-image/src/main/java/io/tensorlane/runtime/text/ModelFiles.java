package io.tensorlane.runtime.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** Reading the JSON files of a Hugging Face model folder (tokenizer.json and the optional configs next to it). */
final class ModelFiles {
    static final ObjectMapper JSON = new ObjectMapper();

    private ModelFiles() {}

    /** The parsed file, or a MissingNode when it does not exist. */
    static JsonNode optional(Path file) {
        if (!Files.isRegularFile(file)) {
            return MissingNode.getInstance();
        }
        try {
            return JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot parse " + file + ": " + e.getMessage(), e);
        }
    }

    static String readString(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /** A special token in tokenizer_config.json: a plain string or an AddedToken object {"content": ...}; else null. */
    static String tokenText(JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            return null;
        }
        if (node.isTextual()) {
            return node.asText();
        }
        JsonNode content = node.get("content");
        return content != null && content.isTextual() ? content.asText() : null;
    }

    /** An id field that is an int, a list of ints, or null/absent (an empty list). */
    static List<Integer> ids(JsonNode node) {
        List<Integer> out = new ArrayList<>();
        if (node == null || node.isNull() || node.isMissingNode()) {
            return out;
        }
        if (node.isIntegralNumber()) {
            out.add(node.asInt());
        } else if (node.isArray()) {
            for (JsonNode n : node) {
                if (n.isIntegralNumber()) {
                    out.add(n.asInt());
                }
            }
        }
        return out;
    }

    /**
     * Token string to id over the model's vocabulary and the added tokens of tokenizer.json. The model vocabulary is an
     * object (BPE, WordPiece, WordLevel) or a list of [piece, score] pairs whose index is the id (Unigram).
     */
    static Map<String, Integer> vocabulary(JsonNode tokenizerJson) {
        Map<String, Integer> vocab = new HashMap<>();
        JsonNode v = tokenizerJson.path("model").path("vocab");
        if (v.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                vocab.put(e.getKey(), e.getValue().asInt());
            }
        } else if (v.isArray()) {
            int id = 0;
            for (JsonNode piece : v) {
                if (piece.isArray() && piece.size() > 0) {
                    vocab.put(piece.get(0).asText(), id);
                }
                id++;
            }
        }
        for (JsonNode added : tokenizerJson.path("added_tokens")) {
            if (added.path("content").isTextual() && added.path("id").isIntegralNumber()) {
                vocab.put(added.get("content").asText(), added.get("id").asInt());
            }
        }
        return vocab;
    }
}
