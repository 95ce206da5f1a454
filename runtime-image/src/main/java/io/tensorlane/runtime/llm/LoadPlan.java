package io.tensorlane.runtime.llm;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.TpLayout;

/**
 * What {@link LlmEngine#load} decides from the model's config.json and the options alone, and what it refuses before
 * any GPU memory is taken, each refusal naming the way out:
 *
 * <ul>
 *   <li>the longest sequence: the options' {@code maxModelLen}, or {@code min(max_position_embeddings, }{@link
 *       #DEFAULT_MAX_MODEL_LEN}{@code )} when it is 0; never past the model's positions, nor past a sliding window
 *       (sliding-window attention is not implemented);
 *   <li>the head size the attention kernels take (a multiple of 32, at most 256);
 *   <li>the custom allreduce's buffers and algorithm table: the operator's budget when the plan gave one (larger
 *       messages go to NCCL), else (and always for virtual ranks, which have no NCCL) what the largest step needs; virtual
 *       ranks get fewer allreduce blocks each ({@link #VIRTUAL_RANK_BLOCKS}). With NCCL as the allreduce the table is
 *       NCCL's single entry.
 * </ul>
 *
 * The one refusal that waits until the KV cache is sized is here too ({@link #checkKvHoldsOneSequence}). Pure.
 *
 * @param maxModelLen     the longest sequence (prompt + output) the engine serves
 * @param maxBlocksPerSeq KV blocks of one sequence of {@code maxModelLen} tokens
 * @param buffers         the custom allreduce's buffer layout per rank
 * @param table           the allreduce algorithm table
 */
record LoadPlan(int maxModelLen, int maxBlocksPerSeq, BufferLayout buffers, AlgorithmTable table) {
    /** The longest sequence when none is given: the model's own limit, at most this (KV and rope tables stay modest). */
    static final int DEFAULT_MAX_MODEL_LEN = 8192;

    /** Allreduce blocks per virtual rank (each multiprocessor holds two). */
    static final int VIRTUAL_RANK_BLOCKS = 16;

    /**
     * The plan for {@code options} over {@code config} split by {@code layout}, activations of {@code dtype};
     * {@code sharing}: several ranks share a GPU (virtual ranks). Throws IllegalArgumentException for what the engine
     * cannot serve.
     */
    static LoadPlan of(EngineOptions options, ModelConfig config, TpLayout layout, DType dtype, boolean sharing) {
        int hd = config.headDim();
        if (hd % 32 != 0 || hd > 256) {
            throw new IllegalArgumentException(
                    "head_dim " + hd + " is not supported by the attention kernels (a multiple of 32, at most 256)");
        }
        int maxLen = maxModelLen(options.maxModelLen(), config);
        int world = options.tp();
        long needed = Math.max(
                (long) options.maxBatchTokens() * config.hiddenSize() * dtype.bytes(),
                4L * options.maxLogitRows() * layout.vocabPadded());
        long maxMsg = options.maxMessageBytes() > 0 && !sharing
                ? options.maxMessageBytes()
                : Math.max(needed, options.maxMessageBytes());
        BufferLayout bl = BufferLayout.of(
                world,
                world > 1 && !options.nccl() ? maxMsg : BufferLayout.VECTOR_BYTES,
                sharing ? VIRTUAL_RANK_BLOCKS : BufferLayout.DEFAULT_BLOCKS,
                BufferLayout.DEFAULT_GRAPH_SLOTS);
        AlgorithmTable table = options.nccl()
                ? AlgorithmTable.single(world, Algorithm.OneStage, 1)
                : options.table() != null && options.table().maxMessageBytes() <= bl.maxMessageBytes()
                        ? options.table()
                        : AlgorithmTable.defaults(world, bl.maxMessageBytes());
        return new LoadPlan(maxLen, (maxLen + options.blockSize() - 1) / options.blockSize(), bl, table);
    }

    /** {@code requested} (0: the default) checked against the model's positions and sliding window. */
    static int maxModelLen(int requested, ModelConfig config) {
        int maxLen = requested == 0 ? Math.min(DEFAULT_MAX_MODEL_LEN, config.maxPositionEmbeddings()) : requested;
        if (maxLen > config.maxPositionEmbeddings()) {
            throw new IllegalArgumentException("max model length " + maxLen
                    + " exceeds the model's max_position_embeddings " + config.maxPositionEmbeddings());
        }
        if (config.slidingWindow() != null && maxLen > config.slidingWindow()) {
            throw new IllegalArgumentException("max model length " + maxLen + " exceeds the model's sliding window "
                    + config.slidingWindow() + " (sliding-window attention is not implemented); pass --max-model-len "
                    + config.slidingWindow() + " or less");
        }
        return maxLen;
    }

    /** Refuses a KV cache of {@code blocks} blocks of {@code blockSize} tokens that cannot hold one longest sequence. */
    void checkKvHoldsOneSequence(int blocks, int blockSize) {
        if (blocks < maxBlocksPerSeq) {
            throw new IllegalArgumentException("the KV cache holds " + (long) blocks * blockSize
                    + " tokens, less than one sequence of " + maxModelLen + " tokens: raise the memory fraction or "
                    + "TENSORLANE_KV_CACHE_TOKENS, or lower --max-model-len");
        }
    }
}
