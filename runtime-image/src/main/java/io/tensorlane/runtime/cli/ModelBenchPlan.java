package io.tensorlane.runtime.cli;

import io.tensorlane.contract.EngineEnv;
import io.tensorlane.runtime.common.EngineSettings;
import io.tensorlane.runtime.llm.EngineOptions;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;
import io.tensorlane.runtime.options.EngineArgs;
import java.util.HashSet;
import java.util.List;

/**
 * What a {@code bench-model} run does, derived from its options and config.json without touching the GPU; every
 * problem with the options is named here, before any GPU work.
 *
 * @param seqLen         tokens per sequence after the last decode step (context + warm-up + iters)
 * @param kvNeededTokens the KV cache the run needs (the largest batch's sequences at seqLen, or the prefill)
 */
record ModelBenchPlan(
        ModelConfig config,
        List<Integer> batches,
        int maxBatch,
        int seqLen,
        int maxModelLen,
        long kvNeededTokens,
        long kvTokens,
        int prefillIters,
        EngineOptions options) {
    /** The largest decode batch accepted (graph buckets and logits buffers are sized by it). */
    static final int MAX_BATCH = 1024;

    static final int BLOCK_SIZE = EngineSettings.BLOCK_SIZE;

    /** The plan of the command's options (picocli has set its fields; {@code e}: its engine options resolved). */
    static ModelBenchPlan of(ModelBenchCommand c, EngineArgs.Resolved e) {
        if (c.batches == null || c.batches.isEmpty()) {
            throw new IllegalArgumentException("--batches: give at least one batch size");
        }
        if (new HashSet<>(c.batches).size() != c.batches.size()) {
            throw new IllegalArgumentException("--batches has a batch size twice: " + c.batches);
        }
        for (int b : c.batches) {
            if (b < 1 || b > MAX_BATCH) {
                throw new IllegalArgumentException("--batches: batch sizes must be 1.." + MAX_BATCH + ", got " + b);
            }
        }
        if (c.context < 1) {
            throw new IllegalArgumentException("--context must be >= 1, got " + c.context);
        }
        if (c.warmup < 1) {
            throw new IllegalArgumentException(
                    "--warmup must be >= 1 (the first decode step of a batch size captures its CUDA graph), got "
                            + c.warmup);
        }
        if (c.iters < 1) {
            throw new IllegalArgumentException("--iters must be >= 1, got " + c.iters);
        }
        if (c.warmup >= c.context) {
            throw new IllegalArgumentException("--warmup " + c.warmup + " must be less than --context " + c.context
                    + " (the sequences are prefilled to the context minus the warm-up steps)");
        }
        if (c.prefillTokens < 0 || c.prefillIters < 0) {
            throw new IllegalArgumentException("--prefill-tokens and --prefill-iters must be >= 0");
        }
        if (c.maxSeconds < 0) {
            throw new IllegalArgumentException("--max-seconds must be >= 0, got " + c.maxSeconds);
        }
        if (e.nccl() && e.virtualRanks()) {
            throw new IllegalArgumentException(
                    "--nccl needs one GPU per rank: it cannot be combined with --virtual-ranks");
        }
        if (e.nccl() && e.tp() < 2) {
            throw new IllegalArgumentException("--nccl needs --tp >= 2 (one rank has no allreduce)");
        }
        int maxBatch = c.batches.stream().mapToInt(Integer::intValue).max().getAsInt();
        if (e.maxBatchTokens() < maxBatch) {
            throw new IllegalArgumentException("--max-batch-tokens " + e.maxBatchTokens()
                    + " is less than the largest batch " + maxBatch + " (a decode step of B sequences is B tokens)");
        }
        ModelConfig config = ModelConfig.read(e.requireModel());
        TpLayout.of(config, Math.max(1, Math.min(e.tp(), 8))); // a TP degree that cannot split the heads is named here
        int maxK = 0;
        for (int k : c.verifyKs == null ? List.<Integer>of() : c.verifyKs) {
            if (k < 1 || k > io.tensorlane.runtime.sched.SpeculativeConfig.MAX_K) {
                throw new IllegalArgumentException("--verify-ks: k must be 1.."
                        + io.tensorlane.runtime.sched.SpeculativeConfig.MAX_K + ", got " + k);
            }
            maxK = Math.max(maxK, k);
        }
        // a verify step of k writes positions context .. context + k
        long seqLenL = (long) c.context + Math.max(c.iters, maxK + 1);
        int limit = config.slidingWindow() != null
                ? Math.min(config.maxPositionEmbeddings(), config.slidingWindow())
                : config.maxPositionEmbeddings();
        if (seqLenL > limit) {
            throw new IllegalArgumentException("--context " + c.context + " + " + c.iters + " timed decode steps = "
                    + seqLenL + " tokens exceeds the model's "
                    + (limit == config.maxPositionEmbeddings() ? "max_position_embeddings " : "sliding window ")
                    + limit);
        }
        if (c.prefillTokens > limit) {
            throw new IllegalArgumentException(
                    "--prefill-tokens " + c.prefillTokens + " exceeds the model's max_position_embeddings " + limit);
        }
        int seqLen = (int) seqLenL;
        int maxModelLen = Math.max(seqLen, c.prefillTokens);
        if (e.maxModelLen() > 0) {
            if (e.maxModelLen() < maxModelLen) {
                throw new IllegalArgumentException(
                        (c.eng.maxModelLenFlag() ? "--max-model-len " : EngineEnv.MAX_MODEL_LENGTH + "=")
                                + e.maxModelLen() + " is shorter than the run's longest sequence " + maxModelLen
                                + " (context + timed decode steps, or the prefill)");
            }
            maxModelLen = e.maxModelLen();
        }
        long blocksPerSeq = blocks(seqLen);
        long needBlocks =
                Math.max((long) maxBatch * blocksPerSeq, Math.max(blocks(c.prefillTokens), blocks(maxModelLen)));
        long need = needBlocks * BLOCK_SIZE;
        if (e.kvCacheTokens() > 0 && blocks(e.kvCacheTokens()) < needBlocks) {
            throw new IllegalArgumentException(e.kvCacheTokensBy() + " " + e.kvCacheTokens() + " is too small: batch "
                    + maxBatch + " x (context " + c.context
                    + " + " + c.iters + " timed decode steps) needs " + need + " tokens of KV cache ("
                    + needBlocks + " blocks of " + BLOCK_SIZE
                    + "); give at least that or 0 (sized automatically)");
        }
        long kv = e.kvCacheTokens() > 0 ? e.kvCacheTokens() : need;
        // the verify steps' timings take k + 1 tokens a sequence whether or not --speculative is given
        EngineOptions base = e.options(maxBatch, maxModelLen, kv, maxBatch * (maxK + 1));
        EngineOptions opts = base.withVerifyTokens(Math.max(base.verifyTokens(), maxBatch * (maxK + 1)));
        return new ModelBenchPlan(
                config,
                List.copyOf(c.batches),
                maxBatch,
                seqLen,
                maxModelLen,
                need,
                kv,
                c.prefillIters > 0 ? c.prefillIters : c.iters,
                opts);
    }

    private static long blocks(long tokens) {
        return (tokens + BLOCK_SIZE - 1) / BLOCK_SIZE;
    }
}
