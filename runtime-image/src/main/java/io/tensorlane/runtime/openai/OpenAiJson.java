package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;

/** The package's one Jackson mapper and its read/write helpers. */
public final class OpenAiJson {
    /**
     * Reads NaN/Infinity literals (so that a number field holding one is refused by name instead of as malformed JSON),
     * refuses trailing content after the top-level value.
     */
    public static final ObjectMapper MAPPER = JsonMapper.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();

    private OpenAiJson() {}

    /** The request body as a JSON object; 400 naming the problem when it is not one. */
    public static JsonNode readBody(byte[] body) {
        if (body == null || body.length == 0) {
            throw OpenAiException.badRequest(null, "The request body is empty; expected a JSON object");
        }
        JsonNode root;
        try {
            root = MAPPER.readTree(body);
        } catch (JsonProcessingException e) {
            throw OpenAiException.badRequest(
                    null,
                    "The request body is not valid JSON: " + e.getOriginalMessage()
                            + (e.getLocation() == null
                                    ? ""
                                    : " (line " + e.getLocation().getLineNr() + ", column "
                                            + e.getLocation().getColumnNr() + ")"));
        } catch (java.io.IOException e) {
            throw OpenAiException.badRequest(null, "The request body could not be read: " + e.getMessage());
        }
        if (root == null || root.isMissingNode()) {
            throw OpenAiException.badRequest(null, "The request body is empty; expected a JSON object");
        }
        if (!root.isObject()) {
            throw OpenAiException.badRequest(
                    null, "The request body must be a JSON object, got " + JsonFields.kind(root));
        }
        return root;
    }

    public static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
