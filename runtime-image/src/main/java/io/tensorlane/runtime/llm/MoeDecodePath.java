package io.tensorlane.runtime.llm;

/**
 * Which kernels a MoE layer's step of {@code n} tokens takes ({@link MoeMlp}); pure.
 *
 * @param fusedRouter the router GEMV fused with top-k ({@code tl_moe_router}) instead of cuBLAS + {@code tl_moe_route}
 * @param pairs       the pairs stay on the device (each (token, slot) pair reads its expert's rows; no host round trip,
 *                    so the step replays in CUDA graphs); false: grouped by expert around cuBLAS GEMMs (long steps)
 * @param fusedPairs  with {@code pairs}: gate/up with the silu epilogue and down with the weighted sum (two launches)
 *                    instead of gate/up, silu, down and combine (four)
 */
record MoeDecodePath(boolean fusedRouter, boolean pairs, boolean fusedPairs) {
    /**
     * @param fusedMaxTokens the longest step that takes the fused kernels ({@link MoeFusedDecode#maxTokens})
     * @param pairTokens     the longest step kept on the device ({@link MoeMlp.Buffers#pairTokens})
     */
    static MoeDecodePath of(int fusedMaxTokens, int n, int pairTokens) {
        boolean pairs = n <= pairTokens;
        boolean fused = n <= fusedMaxTokens;
        return new MoeDecodePath(fused && pairs && n <= MoeDecodeKernels.ROUTER_MAX_TOKENS, pairs, fused && pairs);
    }

    /**
     * The longest step of its shape kept on the device: {@code decodeRows} (one token a sequence and the spare row) for
     * any step, up to {@code pairTokens} for one of short chunks ({@link MlpBlock#forward}: decode and verify steps).
     * Longer prompt chunks are grouped by expert: on the device each of their (token, slot) pairs would read its
     * expert's rows again.
     */
    static int deviceLimit(boolean shortChunks, int decodeRows, int pairTokens) {
        return shortChunks ? pairTokens : Math.min(decodeRows, pairTokens);
    }
}
