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
 * @param freeBlocks    KV blocks no sequence holds (never used, or cached and evictable): all of them when idle
 * @param cachedBlocks  KV blocks registered in the prefix cache (held or evictable)
 * @param evictions     cached blocks evicted so far to make room
 * @param audits        block audits run so far ({@link SchedulerConfig#blockAudit}, 0 when off)
 */
public record SchedulerStats(
        int running,
        int waiting,
        double kvUsage,
        long preemptions,
        long steps,
        long promptTokens,
        long generatedTokens,
        int freeBlocks,
        int cachedBlocks,
        long evictions,
        long audits) {
    /** A snapshot with the KV figures read from {@code blocks} (scheduler thread). */
    static SchedulerStats of(
            int running,
            int waiting,
            BlockAllocator blocks,
            long preemptions,
            long steps,
            long promptTokens,
            long generatedTokens,
            long audits) {
        return new SchedulerStats(
                running,
                waiting,
                blocks.usage(),
                preemptions,
                steps,
                promptTokens,
                generatedTokens,
                blocks.freeBlocks(),
                blocks.cachedBlocks(),
                blocks.evictions(),
                audits);
    }

    /** The snapshot before any scheduler reports: nothing running, every one of {@code blocks} free. */
    static SchedulerStats idle(int blocks) {
        return new SchedulerStats(0, 0, 0, 0, 0, 0, 0, blocks, 0, 0, 0);
    }
}
