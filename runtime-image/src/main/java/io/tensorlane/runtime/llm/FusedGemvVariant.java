package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.model.WeightType;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The inner loop of the fused one-token linears ({@link FusedGemvKernels}, tl_gemv_fused.cuh's kPipe, kXf32, kBits),
 * chosen by {@value #ENV}: {@code base} (unset or blank), {@code pipe}, {@code pipe-xf32}, {@code pipe-xf32-bits} or
 * {@code stage}. Each {@code pipe} variant adds to the one before it:
 *
 * <ul>
 *   <li>{@link #PIPE}: a lane's next group of weight loads is in flight while it consumes the current group;
 *   <li>{@link #PIPE_XF32}: the norm kernels stage x in shared memory as fp32, so no row converts it again;
 *   <li>{@link #PIPE_XF32_BITS}: FP8 weights are decoded by integer operations (times 2^-120, folded into the scale)
 *       instead of the e4m3 → half → float conversions; dense weights take {@link #PIPE_XF32}'s kernels.
 * </ul>
 *
 * {@link #STAGE} stands apart: a lane's weight chunks of a row are copied into shared memory with cp.async, eight at a
 * time, and consumed after one wait, so that they are in flight together (the base loop's SASS issues them one or two
 * at a time); it takes {@link FusedGemvKernels#STAGE_WARP_BYTES} of dynamic shared memory a warp.
 *
 * <p>{@link #PIPE}, {@link #PIPE_XF32} and {@link #STAGE} give the bits of {@link #BASE}; {@link #PIPE_XF32_BITS} may
 * differ where a partial sum falls below fp32's normal range (kernelcheck shows how often). The pipe variants were no
 * faster than {@link #BASE} on an H200 and an H100 (RESULTS.md, 2026-12-05 and 2026-12-06); {@link #STAGE} has not run
 * on a GPU yet. {@link #BASE} is the default.
 */
public enum FusedGemvVariant {
    BASE("base", ""),
    PIPE("pipe", "_p"),
    PIPE_XF32("pipe-xf32", "_px"),
    PIPE_XF32_BITS("pipe-xf32-bits", "_pxb"),
    STAGE("stage", "_s");

    public static final String ENV = "TENSORLANE_FUSED_GEMV_VARIANT";

    private final String key;
    private final String suffix;

    FusedGemvVariant(String key, String suffix) {
        this.key = key;
        this.suffix = suffix;
    }

    /** The value of {@value #ENV} that names this variant. */
    public String key() {
        return key;
    }

    /** The kernel-name suffix for a weight of this type ({@link #PIPE_XF32_BITS} decodes FP8 only). */
    public String suffix(WeightType type) {
        return this == PIPE_XF32_BITS && !type.fp8() ? PIPE_XF32.suffix : suffix;
    }

    /** Bytes of dynamic shared memory a launch of this variant's kernels takes for a block of {@code warps}. */
    public int sharedBytes(int warps) {
        return this == STAGE ? warps * FusedGemvKernels.STAGE_WARP_BYTES : 0;
    }

    /** The variant {@code value} names (unset or blank: {@link #BASE}); anything else is an error listing the choices. */
    public static FusedGemvVariant parse(String value) {
        if (value == null || value.isBlank()) {
            return BASE;
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        return Arrays.stream(values())
                .filter(x -> x.key.equals(v))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException(ENV + "='" + value + "': expected one of "
                        + Arrays.stream(values()).map(FusedGemvVariant::key).collect(Collectors.joining(", "))));
    }

    /** The variant of this process's environment. */
    public static FusedGemvVariant fromEnv() {
        return parse(System.getenv(ENV));
    }
}
