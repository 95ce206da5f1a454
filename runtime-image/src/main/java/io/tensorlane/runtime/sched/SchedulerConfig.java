package io.tensorlane.runtime.sched;

/**
 * Limits of the {@link Scheduler}.
 *
 * @param maxSeqs         the most running sequences (rows of one step); the engine's decode-graph limit
 * @param maxBatchTokens  the most tokens of one step (decode tokens + prefill chunks)
 * @param maxWaiting      the most requests waiting for admission before submit throws {@link QueueFullException}
 * @param maxModelLen     the longest sequence, prompt + max tokens
 * @param maxBlocksPerSeq width of the block tables the engine was built for
 * @param prefixCaching   reuse the KV of cached full blocks across sequences ({@link PrefixCache})
 * @param prefixCacheSalt mixed into every block hash: stands for what the KV depends on besides the tokens (the model,
 *                        its weights' and the KV cache's dtypes), see {@link #salt}
 * @param blockAudit      a debug switch: after every step the scheduler audits the block allocator against the live
 *                        sequences' tables ({@link BlockAudit}) and stops serving at the first inconsistency
 * @param maxLogitRows    the most logits rows one step may have (the executor's buffer, at least {@code maxSeqs}); what
 *                        the other rows of a step leave is what prompt-logprob chunks get ({@link PromptLogprobs})
 */
public record SchedulerConfig(
        int maxSeqs,
        int maxBatchTokens,
        int maxWaiting,
        int maxModelLen,
        int maxBlocksPerSeq,
        boolean prefixCaching,
        long prefixCacheSalt,
        boolean blockAudit,
        int maxLogitRows) {
    /** Limits with prefix caching on (salt 0). */
    public SchedulerConfig(int maxSeqs, int maxBatchTokens, int maxWaiting, int maxModelLen, int maxBlocksPerSeq) {
        this(maxSeqs, maxBatchTokens, maxWaiting, maxModelLen, maxBlocksPerSeq, true, 0);
    }

    /** Limits with as many logits rows as sequences. */
    public SchedulerConfig(
            int maxSeqs,
            int maxBatchTokens,
            int maxWaiting,
            int maxModelLen,
            int maxBlocksPerSeq,
            boolean prefixCaching,
            long prefixCacheSalt) {
        this(
                maxSeqs,
                maxBatchTokens,
                maxWaiting,
                maxModelLen,
                maxBlocksPerSeq,
                prefixCaching,
                prefixCacheSalt,
                false,
                maxSeqs);
    }

    /** The same limits with {@code rows} logits rows a step (the engine's {@code maxLogitRows}). */
    public SchedulerConfig withMaxLogitRows(int rows) {
        return new SchedulerConfig(
                maxSeqs,
                maxBatchTokens,
                maxWaiting,
                maxModelLen,
                maxBlocksPerSeq,
                prefixCaching,
                prefixCacheSalt,
                blockAudit,
                rows);
    }

    /** The same limits with prefix caching on or off and the salt from {@code kvIdentity} (see {@link #salt}). */
    public SchedulerConfig withPrefixCaching(boolean on, String kvIdentity) {
        return new SchedulerConfig(
                maxSeqs,
                maxBatchTokens,
                maxWaiting,
                maxModelLen,
                maxBlocksPerSeq,
                on,
                salt(kvIdentity),
                blockAudit,
                maxLogitRows);
    }

    /** The same limits with the block audit after every step on or off (a debug switch; see {@link BlockAudit}). */
    public SchedulerConfig withBlockAudit(boolean on) {
        return new SchedulerConfig(
                maxSeqs,
                maxBatchTokens,
                maxWaiting,
                maxModelLen,
                maxBlocksPerSeq,
                prefixCaching,
                prefixCacheSalt,
                on,
                maxLogitRows);
    }

    /** A prefix-cache salt from text naming what the KV depends on besides the tokens. */
    public static long salt(String kvIdentity) {
        return BlockHashes.salt(kvIdentity);
    }

    public SchedulerConfig {
        if (maxSeqs < 1 || maxBatchTokens < maxSeqs) {
            throw new IllegalArgumentException(
                    "need 1 <= max sequences (" + maxSeqs + ") <= max batch tokens (" + maxBatchTokens + ")");
        }
        if (maxLogitRows < maxSeqs) {
            throw new IllegalArgumentException(
                    "max logit rows (" + maxLogitRows + ") must be >= max sequences (" + maxSeqs + ")");
        }
        if (maxWaiting < 0 || maxModelLen < 1 || maxBlocksPerSeq < 1) {
            throw new IllegalArgumentException(
                    "need max waiting >= 0, max model length >= 1 and max blocks per sequence >= 1");
        }
    }

    /**
     * Throws IllegalArgumentException when {@code req} can never run: longer than the max model length, more KV blocks than
     * the whole cache or a block table holds, or token ids outside the vocabulary.
     */
    void check(SeqRequest req, BlockAllocator blocks, int vocab) {
        long total = (long) req.promptIds().length + req.maxTokens();
        if (total > maxModelLen) {
            throw new IllegalArgumentException("request " + req.id() + ": prompt (" + req.promptIds().length
                    + " tokens) + max tokens " + req.maxTokens() + " exceeds the max model length " + maxModelLen);
        }
        int need = blocks.blocksFor(total);
        if (need > blocks.blocks() || need > maxBlocksPerSeq) {
            throw new IllegalArgumentException("request " + req.id() + ": " + total + " tokens need " + need
                    + " KV blocks; the cache has " + blocks.blocks() + ", a sequence may have " + maxBlocksPerSeq);
        }
        for (int id : req.promptIds()) {
            if (id < 0 || id >= vocab) {
                throw new IllegalArgumentException("request " + req.id() + ": token id " + id
                        + " outside the vocabulary (0.." + (vocab - 1) + ")");
            }
        }
    }
}
