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
        FinishReason reason) {}
