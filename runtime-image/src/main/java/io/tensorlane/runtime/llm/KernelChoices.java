package io.tensorlane.runtime.llm;

import java.util.Locale;

/**
 * The engine's kernel choices where it has a faster kernel and an earlier one: {@code bench-model --baseline-kernels}
 * takes {@link #BASELINE} (the benchmark's same-run baseline), everything else {@link #fromEnv()}.
 *
 * @param tiledPrefill the tensor-core prefill attention kernel (false: the split-key kernel for every token)
 * @param gemv         which linears of one-token steps take the GEMV kernel instead of cuBLAS
 * @param fusedNorm    on two or more ranks, the allreduce fused with the residual add + RMSNorm where the table routes
 *                     the message to OneStage ({@link io.tensorlane.runtime.engine.FusedNorm}); {@value #FUSED_NORM_ENV}
 *                     = {@code on} (unset) or {@code off}
 * @param push         on two or more ranks, OneStage's push variant where it fits
 *                     ({@link io.tensorlane.runtime.engine.Communicator#setPush}); {@value #PUSH_ENV} = {@code on} or
 *                     {@code off} (unset: off until it is measured and checked on two real GPUs)
 */
public record KernelChoices(boolean tiledPrefill, GemvPolicy gemv, boolean fusedNorm, boolean push) {
    public static final String FUSED_NORM_ENV = "TENSORLANE_FUSED_NORM";
    public static final String PUSH_ENV = "TENSORLANE_ALLREDUCE_PUSH";

    /**
     * The earlier kernels: split-key attention for prefill tokens, cuBLAS for every linear, allreduce and norm apart,
     * OneStage pulling.
     */
    public static final KernelChoices BASELINE = new KernelChoices(false, GemvPolicy.OFF, false, false);

    /**
     * The choices of {@link GemvPolicy#ENV}, {@value #FUSED_NORM_ENV} and {@value #PUSH_ENV} (a bad value is an error
     * naming the choices).
     */
    public static KernelChoices parse(String gemv, String fusedNorm, String push) {
        return new KernelChoices(
                true,
                GemvPolicy.parse(gemv),
                parseOnOff(FUSED_NORM_ENV, fusedNorm, true),
                parseOnOff(PUSH_ENV, push, false));
    }

    /** The choices of this process's environment. */
    public static KernelChoices fromEnv() {
        return parse(System.getenv(GemvPolicy.ENV), System.getenv(FUSED_NORM_ENV), System.getenv(PUSH_ENV));
    }

    private static boolean parseOnOff(String name, String value, boolean unset) {
        if (value == null || value.isBlank()) {
            return unset;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException(name + "='" + value + "': expected on or off");
        };
    }
}
