package io.tensorlane.runtime.llm;

import io.tensorlane.runtime.model.WeightType;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The inner loop of the fused one-token linears ({@link FusedGemvKernels}, tl_gemv_fused.cuh's kPipe, kXf32, kBits),
 * chosen by {@value #ENV}: {@code base} (unset or blank), {@code pipe}, {@code pipe-xf32} or {@code pipe-xf32-bits}.
 * Each variant adds to the one before it:
 *
 * <ul>
 *   <li>{@link #PIPE}: a lane's next group of weight loads is in flight while it consumes the current group;
 *   <li>{@link #PIPE_XF32}: the norm kernels stage x in shared memory as fp32, so no row converts it again;
 *   <li>{@link #PIPE_XF32_BITS}: FP8 weights are decoded by integer operations (times 2^-120, folded into the scale)
 *       instead of the e4m3 → half → float conversions; dense weights take {@link #PIPE_XF32}'s kernels.
 * </ul>
 *
 * The first two give the bits of {@link #BASE}; the last may differ where a partial sum falls below fp32's normal range
 * (kernelcheck shows how often). Not yet timed on a GPU: {@link #BASE} stays the default until a run measures them.
 */
public enum FusedGemvVariant {
    BASE("base", ""),
    PIPE("pipe", "_p"),
    PIPE_XF32("pipe-xf32", "_px"),
    PIPE_XF32_BITS("pipe-xf32-bits", "_pxb");

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
