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
 */
public record KernelChoices(boolean tiledPrefill, GemvPolicy gemv, boolean fusedNorm) {
    public static final String FUSED_NORM_ENV = "TENSORLANE_FUSED_NORM";

    /** The earlier kernels: split-key attention for prefill tokens, cuBLAS for every linear, allreduce and norm apart. */
    public static final KernelChoices BASELINE = new KernelChoices(false, GemvPolicy.OFF, false);

    /** The choices of {@link GemvPolicy#ENV} and {@value #FUSED_NORM_ENV} (a bad value is an error naming the choices). */
    public static KernelChoices parse(String gemv, String fusedNorm) {
        return new KernelChoices(true, GemvPolicy.parse(gemv), parseOnOff(FUSED_NORM_ENV, fusedNorm));
    }

    /** The choices of this process's environment. */
    public static KernelChoices fromEnv() {
        return parse(System.getenv(GemvPolicy.ENV), System.getenv(FUSED_NORM_ENV));
    }

    private static boolean parseOnOff(String name, String value) {
        if (value == null || value.isBlank()) {
            return true;
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "on" -> true;
            case "off" -> false;
            default -> throw new IllegalArgumentException(name + "='" + value + "': expected on or off");
        };
    }
}
