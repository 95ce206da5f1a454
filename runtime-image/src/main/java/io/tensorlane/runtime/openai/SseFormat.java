package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;

/**
 * Server-sent events as OpenAI-compatible servers write them and the openai Python client reads them: each event is
 * one {@code data: <json>} line and a blank line (compact JSON never holds a raw newline), the stream ends with
 * {@code data: [DONE]}. Response header: {@code Content-Type: text/event-stream}.
 */
public final class SseFormat {
    public static final String CONTENT_TYPE = "text/event-stream";
    public static final String DONE = "data: [DONE]\n\n";
    private static final byte[] DONE_BYTES = DONE.getBytes(StandardCharsets.UTF_8);

    private SseFormat() {}

    public static String event(JsonNode json) {
        return "data: " + OpenAiJson.write(json) + "\n\n";
    }

    public static byte[] eventBytes(JsonNode json) {
        return event(json).getBytes(StandardCharsets.UTF_8);
    }

    /** An error after the stream began (status already 200): vLLM sends it as an event, then [DONE]. */
    public static String error(OpenAiException e) {
        return event(e.toJsonNode());
    }

    public static byte[] doneBytes() {
        return DONE_BYTES.clone();
    }
}
