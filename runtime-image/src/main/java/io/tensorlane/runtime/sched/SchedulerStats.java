package io.tensorlane.runtime.sched;

/**
 * A snapshot of the scheduler, published after every step (and when requests arrive or end).
 *
 * @param running       sequences admitted (decoding or part-way through prefill)
 * @param waiting       sequences waiting for admission (new and preempted)
 * @param kvUsage       fraction of KV blocks in use, 0..1
 * @param preemptions   sequences preempted so far (blocks freed, recomputed later)
 * @param steps         steps run so far
 * @param promptTokens  prompt tokens of requests that produced their first token
 * @param generatedTokens tokens generated so far
 */
public record SchedulerStats(
        int running,
        int waiting,
        double kvUsage,
        long preemptions,
        long steps,
        long promptTokens,
        long generatedTokens) {}
