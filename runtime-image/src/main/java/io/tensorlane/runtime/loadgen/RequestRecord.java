package io.tensorlane.runtime.loadgen;

/**
 * The measurement of one request. Times are milliseconds; {@code startMs} is relative to its level's start; NaN
 * where not measured (a failed request, TTFT without a content chunk, TPOT with fewer than two output tokens).
 *
 * @param inputTokens the server's {@code usage.prompt_tokens} when reported, else the planned prompt length
 * @param outputTokens the server's {@code usage.completion_tokens} when reported, else the number of content chunks
 * @param status HTTP status (0: no response)
 * @param error why it failed (null on success)
 * @param itlMs inter-token latencies: the gaps between consecutive content chunks
 * @param cachedTokens the server's {@code usage.prompt_tokens_details.cached_tokens} (-1: not reported)
 * @param text the generated text (what a multi-turn conversation sends back as the assistant's turn; null on failure)
 */
public record RequestRecord(
        String level,
        int index,
        double startMs,
        int inputTokens,
        int maxTokens,
        int outputTokens,
        boolean success,
        int status,
        String error,
        double ttftMs,
        double e2eMs,
        double[] itlMs,
        int contentChunks,
        int cachedTokens,
        String text) {

    /** A record without cache information or text. */
    public RequestRecord(
            String level,
            int index,
            double startMs,
            int inputTokens,
            int maxTokens,
            int outputTokens,
            boolean success,
            int status,
            String error,
            double ttftMs,
            double e2eMs,
            double[] itlMs,
            int contentChunks) {
        this(
                level,
                index,
                startMs,
                inputTokens,
                maxTokens,
                outputTokens,
                success,
                status,
                error,
                ttftMs,
                e2eMs,
                itlMs,
                contentChunks,
                -1,
                null);
    }

    /** Time per output token after the first: (e2e − TTFT) / (output tokens − 1); NaN below two tokens or on failure. */
    public double tpotMs() {
        if (!success || outputTokens < 2 || Double.isNaN(ttftMs)) {
            return Double.NaN;
        }
        return (e2eMs - ttftMs) / (outputTokens - 1);
    }

    public static RequestRecord failed(
            String level,
            int index,
            double startMs,
            int inputTokens,
            int maxTokens,
            int status,
            String error,
            double e2eMs) {
        return new RequestRecord(
                level,
                index,
                startMs,
                inputTokens,
                maxTokens,
                0,
                false,
                status,
                error,
                Double.NaN,
                e2eMs,
                new double[0],
                0);
    }
}
