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
        int contentChunks) {

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
