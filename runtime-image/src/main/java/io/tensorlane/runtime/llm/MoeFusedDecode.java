package io.tensorlane.runtime.llm;

/**
 * Which MoE steps take the fused decode kernels ({@link MoeDecodeKernels}: the router GEMV with top-k in one kernel,
 * silu in the gate/up kernel, the weighted sum in the down kernel); {@value #ENV}.
 *
 * <p>{@code auto} (the default): one-token steps with bf16/fp16 experts, with the residual stream folded in as under
 * {@code step}. Measured on an H200 (2026-12-03 15:06 UTC, 8 layers of the Qwen3-30B-A3B geometry,
 * results/h200-2026-12-03-moefuse/): batch 1 0.756 ms fused against 0.780 ms, batch 8 1.966 ms against 1.814 ms, so
 * longer steps stay unfused. FP8 experts' one-token steps stay unfused too: {@code step} was 65.5 against 66.0 µs a
 * layer (H100, 2026-12-07 08:52 UTC), and a version of the FP8 kernels that staged each lane's loads with cp.async
 * took 177 µs of GPU time a layer against the unfused path's 66 in the same run (H100, 2026-12-08 01:13 UTC,
 * results/h100-2026-12-08-stage/; reverted), so they wait for {@code on} or {@code step}. {@code on}: every step kept
 * on the device, the residual not folded; {@code off}: none.
 * {@code step}: one-token steps of any experts, and the MoE block joins the one-token step with the residual stream
 * folded in ({@link MlpBlock#forwardFused}: its RMSNorm a kernel of its own, its down kernel adding to the fp32 residual,
 * {@code tl_moe_down_sum_res}), so at one rank the layer's other linears fuse too. The fold is the default since
 * 2026-12-06: batch 1 0.716 ms against 0.731 ms with {@code on} (H200, 23:00 UTC) and 0.857 against 0.870 (H100, 22:47
 * UTC), the same geometry, results/h200-2026-12-06-spec-moe/ and results/h100-2026-12-06-spec-moe/; qwen3moe and
 * mixtral matched transformers with it at TP 1 and 2 (2026-12-05).
 */
public enum MoeFusedDecode {
    AUTO,
    ON,
    OFF,
    STEP;

    public static final String ENV = "TENSORLANE_MOE_FUSED_DECODE";

    /** The longest step (tokens) that takes the fused kernels, for experts in FP8 or not. */
    public int maxTokens(boolean fp8Experts) {
        return switch (this) {
            case AUTO -> fp8Experts ? 0 : 1;
            case ON -> Integer.MAX_VALUE;
            case OFF -> 0;
            case STEP -> 1;
        };
    }

    /** For the engine's log line. */
    public String describe() {
        return switch (this) {
            case AUTO ->
                "fused (3 kernels a layer) for one-token steps of bf16/fp16 experts, the residual stream folded in";
            case ON -> "fused (3 kernels a layer)";
            case OFF -> "unfused";
            case STEP ->
                "fused (3 kernels a layer, the RMSNorm in the router's) for one-token steps, the residual stream folded"
                        + " in";
        };
    }

    /**
     * Whether one-token steps fold the residual stream through the MoE block ({@code step}, and {@code auto} where its
     * one-token steps are fused: bf16/fp16 experts).
     */
    public boolean foldsResidual() {
        return this == STEP || this == AUTO;
    }

    /**
     * Whether a folded one-token step also takes the MoE block's RMSNorm and router in one kernel ({@code step} only,
     * tl_moe_router_norm: built 2026-12-06, kernelcheck's {@code moe_router_norm} cases compare it with the two kernels
     * bit for bit; its first GPU run, H100 2026-12-07, found it missing from Kernels.MODEL_TYPED_KERNELS, since fixed
     * and not rerun, so {@code auto} keeps the two launches).
     */
    public boolean foldsNorm() {
        return this == STEP;
    }

    /** {@value #ENV}'s value: auto (also unset or blank), on, off or step; anything else is an error naming it. */
    public static MoeFusedDecode parse(String value) {
        if (value != null && value.trim().equalsIgnoreCase("step")) {
            return STEP;
        }
        try {
            return KernelChoices.parseAutoOnOff(ENV, value, AUTO, ON, OFF);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ENV + "='" + value + "': expected auto, on, off or step", e);
        }
    }
}
