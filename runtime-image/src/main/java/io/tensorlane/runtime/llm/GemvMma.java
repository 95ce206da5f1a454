package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.model.WeightType;

/**
 * Which one-token (and FP8 few-token) GEMVs run on the tensor cores (tl_gemv_mma*: 16 rows a block, an mma per 16 x 16
 * weight tile) instead of one warp per output row ({@value #ENV} = {@code auto}, {@code on} or {@code off}).
 * {@link #AUTO} takes the faster kernel of each weight type as measured on an H200 (2026-12-03 13:09 UTC, Llama-3.1-8B
 * geometry, batch 1, `results/h200-2026-12-03-fp8-mma/`): the tensor cores for 128 x 128 block-scaled FP8 (3.499 vs
 * 3.809 ms a step), one warp per row for dense bf16 (4.802 vs 5.027 ms, 11:00 UTC) and per-channel FP8 (3.315 vs
 * 3.514 ms), whose warp kernel has no per-block scale work. Where a one-token step folds the residual stream into its
 * linears ({@link KernelChoices#fusedGemv}: one rank, dense MLPs) the fused one-warp-per-row kernels take every weight
 * type unless this is {@link #ON} (block-scaled FP8 3.373 ms fused against 3.525 on the tensor cores, 15:06 UTC).
 */
public enum GemvMma {
    OFF,
    AUTO,
    ON;

    public static final String ENV = "TENSORLANE_GEMV_MMA";

    /** Whether a GEMV over a weight of this type takes the tensor-core kernel. */
    public boolean uses(WeightType type) {
        return switch (this) {
            case OFF -> false;
            case ON -> true;
            case AUTO -> type == WeightType.FP8_BLOCK || type == WeightType.FP8_BLOCK_ROWS;
        };
    }

    /** The choice {@value #ENV} names (unset or blank: {@link #AUTO}); anything else is an error naming the choices. */
    public static GemvMma parse(String value) {
        return KernelChoices.parseAutoOnOff(ENV, value, AUTO, ON, OFF);
    }
}
