package io.tensorlane.runtime.loadgen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Arrays;

/**
 * Folds one streamed response into a {@link RequestRecord}: feed it the SSE events' data with their arrival time
 * ({@link System#nanoTime()}), then {@link #finish}. A content chunk is one whose {@code choices[0]} carries
 * non-empty {@code text} (completions) or {@code delta.content} (chat); the first one sets TTFT, each later one adds an
 * inter-token latency; their text is kept. The usage chunk ({@code choices: []}, {@code usage: {...}}) gives the token
 * counts (and the cached prompt tokens, {@code prompt_tokens_details.cached_tokens}, where the server reports them). An
 * {@code error} object in the stream, a non-2xx status, a stream without {@code [DONE]} or without any content fail
 * the request. Not thread-safe (the HTTP client delivers one response's lines in order).
 */
public final class StreamAccumulator {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_ERROR_BODY = 500;

    private final long startNanos;
    private int status;
    private long firstNanos = -1;
    private long lastNanos = -1;
    private long doneNanos = -1;
    private double[] itl = new double[16];
    private int itlCount;
    private int chunks;
    private int promptTokens = -1;
    private int completionTokens = -1;
    private int cachedTokens = -1;
    private final StringBuilder text = new StringBuilder();
    private String error;
    private final StringBuilder errorBody = new StringBuilder();

    public StreamAccumulator(long startNanos) {
        this.startNanos = startNanos;
    }

    public void status(int status) {
        this.status = status;
    }

    public int status() {
        return status;
    }

    public boolean ok() {
        return status >= 200 && status < 300;
    }

    /** A raw body line of a non-2xx response (kept, shortened, for the error message). */
    public void errorLine(String line) {
        if (errorBody.length() < MAX_ERROR_BODY) {
            errorBody.append(errorBody.length() > 0 ? " " : "").append(line.strip());
        }
    }

    /** One SSE event's data, received at {@code nanos}. */
    public void event(String data, long nanos) {
        if (doneNanos >= 0) {
            return;
        }
        if (data.strip().equals("[DONE]")) {
            doneNanos = nanos;
            return;
        }
        JsonNode node;
        try {
            node = JSON.readTree(data);
        } catch (Exception e) {
            if (error == null) {
                error = "unparseable stream chunk: " + abbreviate(data);
            }
            return;
        }
        if (node == null || !node.isObject()) {
            return;
        }
        JsonNode err = node.get("error");
        if (err != null && !err.isNull()) {
            if (error == null) {
                error = "stream error: "
                        + (err.hasNonNull("message") ? err.get("message").asText() : abbreviate(err.toString()));
            }
            return;
        }
        JsonNode usage = node.get("usage");
        if (usage != null && usage.isObject()) {
            if (usage.hasNonNull("prompt_tokens")) {
                promptTokens = usage.get("prompt_tokens").asInt();
            }
            if (usage.hasNonNull("completion_tokens")) {
                completionTokens = usage.get("completion_tokens").asInt();
            }
            JsonNode cached = usage.path("prompt_tokens_details").get("cached_tokens");
            if (cached != null && cached.isNumber()) {
                cachedTokens = cached.asInt();
            }
        }
        JsonNode choices = node.get("choices");
        if (choices != null && choices.isArray() && choices.size() > 0) {
            JsonNode c = choices.get(0);
            JsonNode text = c.has("delta") ? c.path("delta").get("content") : c.get("text");
            if (text != null && text.isTextual() && !text.asText().isEmpty()) {
                this.text.append(text.asText());
                content(nanos);
            }
        }
    }

    private void content(long nanos) {
        chunks++;
        if (firstNanos < 0) {
            firstNanos = nanos;
        } else {
            if (itlCount == itl.length) {
                itl = Arrays.copyOf(itl, itl.length * 2);
            }
            itl[itlCount++] = (nanos - lastNanos) / 1e6;
        }
        lastNanos = nanos;
    }

    /**
     * The record. {@code failure} (timeout, connection error) fails it; {@code endNanos} is when the stream ended
     * (E2E runs to {@code [DONE]} when seen).
     */
    public RequestRecord finish(String level, Workload.Prompt prompt, double startMs, long endNanos, String failure) {
        long end = doneNanos >= 0 ? doneNanos : endNanos;
        double e2e = (end - startNanos) / 1e6;
        int input = promptTokens >= 0 ? promptTokens : prompt.inputLen();
        String why = failure;
        if (why == null && !ok()) {
            why = "HTTP " + status + (errorBody.length() > 0 ? ": " + abbreviate(errorBody.toString()) : "");
        }
        if (why == null) {
            why = error;
        }
        if (why == null && doneNanos < 0) {
            why = "stream ended without [DONE]";
        }
        if (why == null && chunks == 0) {
            why = "stream had no content chunk";
        }
        if (why != null) {
            return RequestRecord.failed(level, prompt.index(), startMs, input, prompt.maxTokens(), status, why, e2e);
        }
        int output = completionTokens >= 0 ? completionTokens : chunks;
        double ttft = (firstNanos - startNanos) / 1e6;
        return new RequestRecord(
                level,
                prompt.index(),
                startMs,
                input,
                prompt.maxTokens(),
                output,
                true,
                status,
                null,
                ttft,
                e2e,
                Arrays.copyOf(itl, itlCount),
                chunks,
                cachedTokens,
                text.toString());
    }

    static String abbreviate(String s) {
        String t = s.replaceAll("\\s+", " ").strip();
        return t.length() <= 200 ? t : t.substring(0, 197) + "...";
    }
}
