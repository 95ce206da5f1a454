package io.tensorlane.contract;

/**
 * What the Tensorlane runtime's Mixture-of-Experts router takes (tl_moe.cuh: one warp a token holding 16 logits a
 * lane, one chosen expert a lane; the grouping kernel one thread an expert): the operator refuses larger geometries for
 * the Tensorlane engine, the runtime refuses them at load. One source for both.
 */
public final class MoeLimits {
    /** Routed experts per MoE layer, at most. */
    public static final int MAX_EXPERTS = 512;

    /** Experts per token (top-k), at most. */
    public static final int MAX_TOP_K = 32;

    private MoeLimits() {}
}
