package io.tensorlane.runtime.sched;

/**
 * Timings of one finished request, in seconds from {@code submit} ({@code -1} for what did not happen).
 *
 * @param queueSeconds    submit until first admitted to a step (vLLM's queued time)
 * @param ttftSeconds     submit until the first token
 * @param e2eSeconds      submit until finished
 * @param preemptions     times the sequence was preempted and recomputed
 */
public record RequestTimings(
        double queueSeconds,
        double ttftSeconds,
        double e2eSeconds,
        int promptTokens,
        int completionTokens,
        int preemptions,
        FinishReason reason) {
    /** The timings of {@code s}, finished at {@code now} for {@code reason}. */
    static RequestTimings of(Sequence s, long now, FinishReason reason) {
        return new RequestTimings(
                s.admittedNanos < 0 ? -1 : (s.admittedNanos - s.arrivalNanos) / 1e9,
                s.firstTokenNanos < 0 ? -1 : (s.firstTokenNanos - s.arrivalNanos) / 1e9,
                (now - s.arrivalNanos) / 1e9,
                s.req.promptIds().length,
                s.generated,
                s.preemptions,
                reason);
    }
}
