package io.tensorlane.contract;

/**
 * Where the Tensorlane runtime puts a draft model ({@code TENSORLANE_SPECULATIVE=draft:DIR,k=K}) and what it takes
 * there, as one description shared by the runtime (which loads it: {@code io.tensorlane.runtime.llm.DraftModel}), the
 * operator's memory planner (which budgets it: {@code DraftPlan}) and the GPU node simulator (which fails a pod that does
 * not budget it: {@code SimDraft}). Pure.
 *
 * <ul>
 *   <li>The draft runs at {@link #TENSOR_PARALLEL} (TP 1) on rank 0's GPU whatever the target's TP: all of its weights
 *       and its whole KV cache (every KV head) are on that GPU, which is then the fullest one.
 *   <li>Its KV cache holds as many tokens as the target's ({@code KvSizing.beside} when the runtime sizes the target's
 *       cache itself; the target's {@code TENSORLANE_KV_CACHE_TOKENS}, rounded up to whole blocks, when the operator
 *       gives them), in the draft's activation dtype (bf16, or fp16 for a float16 checkpoint; never fp8).
 *   <li>It steps one sequence at a time, in chunks of {@link #chunkTokens} tokens, with k + 1 logits rows.
 * </ul>
 */
public final class DraftLayout {
    /** The draft's tensor parallelism in the Tensorlane runtime: 1, on rank 0's GPU. */
    public static final int TENSOR_PARALLEL = 1;
    /** The most tokens of one draft step (a prompt is fed to the draft in chunks of at most this many). */
    public static final int MAX_CHUNK = 512;

    private DraftLayout() {}

    /**
     * Tokens of one draft step: {@code min(maxBatchTokens, }{@value #MAX_CHUNK}{@code )}, at least k + 1 (a verify
     * feed of the k guesses and the token after them fits one step). The draft engine's {@code maxBatchTokens}.
     */
    public static int chunkTokens(int k, int maxBatchTokens) {
        if (k < 1 || maxBatchTokens < 1) {
            throw new IllegalArgumentException("draft chunk: k and max batch tokens must be >= 1");
        }
        return Math.max(k + 1, Math.min(MAX_CHUNK, maxBatchTokens));
    }
}
