package io.tensorlane.runtime.llm;

import java.nio.file.Path;

/**
 * How an {@link LlmEngine} is built.
 *
 * @param modelDir        a Hugging Face model directory (config.json, safetensors, tokenizer files)
 * @param tp              tensor-parallel degree (ranks), 1..8
 * @param virtualRanks    every rank on GPU 0 (tests of TP on one GPU; timings are not interconnect timings)
 * @param maxSeqs         the most sequences in one step (decode batch)
 * @param maxBatchTokens  the most tokens in one step (prefill chunk budget)
 * @param maxModelLen     the longest sequence (prompt + output); 0 = min(max_position_embeddings, 8192)
 * @param kvCacheTokens   KV cache size in tokens; 0 = what the memory fraction leaves after weights and buffers
 * @param memoryFraction  share of each GPU's memory the engine may take (weights, KV, activations, allreduce buffers)
 * @param maxLogitRows    the most logits rows one step produces (≥ maxSeqs; = maxBatchTokens to dump prompt logits)
 * @param graphs          replay decode steps from CUDA graphs (one per batch-size bucket per rank)
 * @param nccl            allreduce through NCCL instead of the custom kernels
 * @param ncclLib         path of libnccl.so.2 (null: the usual search)
 * @param blockSize       tokens per KV block
 * @param table           the allreduce algorithm table of the plan (null: the default table for the buffers)
 * @param maxMessageBytes the largest custom-allreduce message the plan budgeted IPC buffers for (0: the engine sizes
 *                        them for its largest step); larger messages go to NCCL. Virtual ranks (no NCCL) take at least
 *                        what their steps need.
 * @param baselineKernels the engine's earlier kernel choices, bench-model's same-run baseline: the split-key attention
 *                        kernel for prefill tokens too (instead of the tensor-core prefill kernel), cuBLAS for every
 *                        linear (instead of the GEMV kernel of one-token steps, {@link GemvPolicy}) and the allreduce
 *                        and the norm apart ({@link KernelChoices#BASELINE})
 * @param kvCacheDtype    the KV cache's elements: the activations' dtype ({@code auto}) or FP8 e4m3 codes with
 *                        per-layer scales, 1 byte an element ({@link KvCacheDtype})
 * @param verifyTokens    the most tokens of a speculative verify step (k + 1 a sequence; 0 without speculation): with
 *                        the decode steps' rows, the longest step that carries no prompt, which MoE layers keep on the
 *                        device and CUDA graphs hold ({@link #decodeTokens})
 */
public record EngineOptions(
        Path modelDir,
        int tp,
        boolean virtualRanks,
        int maxSeqs,
        int maxBatchTokens,
        int maxModelLen,
        long kvCacheTokens,
        double memoryFraction,
        int maxLogitRows,
        boolean graphs,
        boolean nccl,
        String ncclLib,
        int blockSize,
        io.tensorlane.contract.AlgorithmTable table,
        long maxMessageBytes,
        boolean baselineKernels,
        KvCacheDtype kvCacheDtype,
        int verifyTokens) {

    /** Options with the engine's own kernels and the given allreduce plan. */
    public EngineOptions(
            Path modelDir,
            int tp,
            boolean virtualRanks,
            int maxSeqs,
            int maxBatchTokens,
            int maxModelLen,
            long kvCacheTokens,
            double memoryFraction,
            int maxLogitRows,
            boolean graphs,
            boolean nccl,
            String ncclLib,
            int blockSize,
            io.tensorlane.contract.AlgorithmTable table,
            long maxMessageBytes) {
        this(
                modelDir,
                tp,
                virtualRanks,
                maxSeqs,
                maxBatchTokens,
                maxModelLen,
                kvCacheTokens,
                memoryFraction,
                maxLogitRows,
                graphs,
                nccl,
                ncclLib,
                blockSize,
                table,
                maxMessageBytes,
                false,
                KvCacheDtype.AUTO,
                0);
    }

    /** Options without an allreduce plan: default table, buffers sized for the largest step. */
    public EngineOptions(
            Path modelDir,
            int tp,
            boolean virtualRanks,
            int maxSeqs,
            int maxBatchTokens,
            int maxModelLen,
            long kvCacheTokens,
            double memoryFraction,
            int maxLogitRows,
            boolean graphs,
            boolean nccl,
            String ncclLib,
            int blockSize) {
        this(
                modelDir,
                tp,
                virtualRanks,
                maxSeqs,
                maxBatchTokens,
                maxModelLen,
                kvCacheTokens,
                memoryFraction,
                maxLogitRows,
                graphs,
                nccl,
                ncclLib,
                blockSize,
                null,
                0);
    }

    /** The same options with the operator's allreduce plan. */
    public EngineOptions withAllreducePlan(io.tensorlane.contract.AlgorithmTable t, long maxBytes) {
        return with(t, maxBytes, baselineKernels, kvCacheDtype, verifyTokens);
    }

    /** The same options with split-key attention for every token (true) or the tensor-core prefill kernel (false). */
    public EngineOptions withBaselineKernels(boolean baseline) {
        return with(table, maxMessageBytes, baseline, kvCacheDtype, verifyTokens);
    }

    /** The same options with the KV cache kept in {@code kv}. */
    public EngineOptions withKvCacheDtype(KvCacheDtype kv) {
        return with(table, maxMessageBytes, baselineKernels, kv, verifyTokens);
    }

    /** The same options for verify steps of up to {@code tokens} tokens (0: no speculation). */
    public EngineOptions withVerifyTokens(int tokens) {
        return with(table, maxMessageBytes, baselineKernels, kvCacheDtype, tokens);
    }

    /**
     * The most tokens of a step that carries no prompt chunk: one a sequence, plus one (the step buffers' spare row), or
     * a verify step's.
     */
    public int decodeTokens() {
        return Math.max(maxSeqs + 1, verifyTokens);
    }

    private EngineOptions with(
            io.tensorlane.contract.AlgorithmTable t, long maxBytes, boolean baseline, KvCacheDtype kv, int verify) {
        return new EngineOptions(
                modelDir,
                tp,
                virtualRanks,
                maxSeqs,
                maxBatchTokens,
                maxModelLen,
                kvCacheTokens,
                memoryFraction,
                maxLogitRows,
                graphs,
                nccl,
                ncclLib,
                blockSize,
                t,
                maxBytes,
                baseline,
                kv,
                verify);
    }

    public EngineOptions {
        java.util.Objects.requireNonNull(kvCacheDtype, "kvCacheDtype");
        if (tp < 1 || tp > 8) {
            throw new IllegalArgumentException("--tp must be 1..8, got " + tp);
        }
        if (maxSeqs < 1 || maxBatchTokens < 1 || maxBatchTokens < maxSeqs) {
            throw new IllegalArgumentException(
                    "need 1 <= max sequences (" + maxSeqs + ") <= max batch tokens (" + maxBatchTokens + ")");
        }
        if (maxModelLen < 0 || kvCacheTokens < 0) {
            throw new IllegalArgumentException("max model length and KV cache tokens must be >= 0");
        }
        if (!(memoryFraction > 0 && memoryFraction <= 1)) {
            throw new IllegalArgumentException("memory fraction must be in (0, 1], got " + memoryFraction);
        }
        if (maxLogitRows < maxSeqs) {
            throw new IllegalArgumentException(
                    "max logit rows (" + maxLogitRows + ") must be >= max sequences (" + maxSeqs + ")");
        }
        if (blockSize < 1 || Integer.bitCount(blockSize) != 1) {
            throw new IllegalArgumentException("KV block size must be a power of two, got " + blockSize);
        }
        if (verifyTokens < 0 || verifyTokens > maxLogitRows) {
            throw new IllegalArgumentException(
                    "verify tokens (" + verifyTokens + ") must be in 0..max logit rows (" + maxLogitRows + ")");
        }
        if (maxMessageBytes < 0) {
            throw new IllegalArgumentException("max message bytes must be >= 0, got " + maxMessageBytes);
        }
        if (table != null && table.worldSize() != tp) {
            throw new IllegalArgumentException(
                    "the algorithm table is for world size " + table.worldSize() + ", the engine has " + tp + " ranks");
        }
    }

    public static EngineOptions defaults(Path modelDir, int tp) {
        return new EngineOptions(modelDir, tp, false, 64, 2048, 0, 0, 0.9, 64, true, false, null, 16);
    }
}
