package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.contract.EngineEnv;
import java.util.Locale;
import java.util.Map;

/**
 * The KV cache's element type as asked for ({@code --kv-cache-dtype}, {@link EngineEnv#KV_CACHE_DTYPE}; the names are
 * those of the operator's {@code spec.serving.kvCacheDtype}): {@code auto} keeps K and V in the activations' dtype
 * (bf16 or fp16, 2 bytes an element), {@code fp8} as e4m3 codes (1 byte) with a per-layer k and v scale (the
 * checkpoint's, {@link io.tensorlane.runtime.model.KvScales}, else 1.0). {@code bf16} and {@code fp16} name a 16-bit
 * cache: the kernels keep a 16-bit cache in the activations' dtype, so one that names the other 16-bit type gets the
 * activations' (the same bytes, so the operator's plan of tokens holds) and the engine says so ({@link #note}).
 */
public enum KvCacheDtype {
    AUTO,
    BF16,
    FP16,
    FP8;

    /** The command-line option. */
    public static final String OPTION = "--kv-cache-dtype";

    /** The spellings accepted, for messages and help. */
    public static final String CHOICES = "auto, bf16, fp16 or fp8";

    /** {@code value} read from {@code source} (an option or variable name, for the message); case and blanks ignored. */
    public static KvCacheDtype parse(String value, String source) {
        String v = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
        for (KvCacheDtype d : values()) {
            if (d.name().toLowerCase(Locale.ROOT).equals(v)) {
                return d;
            }
        }
        throw new IllegalArgumentException(
                source + " must be " + CHOICES + " (fp8: e4m3 codes with per-layer scales), got '" + value + "'");
    }

    /** The option's value when given, else {@link EngineEnv#KV_CACHE_DTYPE} from {@code env} when set, else auto. */
    public static KvCacheDtype of(String option, Map<String, String> env) {
        if (option != null) {
            return parse(option, OPTION);
        }
        String v = env.get(EngineEnv.KV_CACHE_DTYPE);
        return v == null || v.isBlank() ? AUTO : parse(v, EngineEnv.KV_CACHE_DTYPE);
    }

    /** Whether the cache holds e4m3 codes. */
    public boolean fp8() {
        return this == FP8;
    }

    /** Bytes of one cached element for a model computing in {@code activation}: 1 for fp8, else the activations'. */
    public int elementBytes(DType activation) {
        return this == FP8 ? 1 : activation.bytes();
    }

    /**
     * What the engine says about this choice for a model computing in {@code activation}: null when the cache is what was
     * asked for, else why it is not (a 16-bit dtype other than the activations').
     */
    public String note(DType activation) {
        if ((this == BF16 && activation != DType.bf16) || (this == FP16 && activation != DType.fp16)) {
            return "KV cache dtype " + this + " asked, the model computes in " + activation + ": the 16-bit KV cache "
                    + "is kept in " + activation + " (the same bytes a token)";
        }
        return null;
    }

    /** The name as the options spell it. */
    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
