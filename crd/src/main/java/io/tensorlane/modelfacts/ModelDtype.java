package io.tensorlane.modelfacts;

import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.ServingSpec.KvCacheDtype;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The element types the planner sizes with. The weight dtype, when {@code spec.model.dtype} is not set: fp8 when
 * config.json's {@code quantization_config} says the linear layers are FP8 ({@link ModelStatus#quantization}), else the
 * dtype config.json declares ({@code torch_dtype} / {@code dtype}), else the safetensors dtype that holds most of the
 * weight bytes, else none (the caller keeps bf16). The activations compute in the {@link #activation} dtype and the KV
 * cache is kept in the {@link #kvCache} dtype, as vLLM and SGLang keep it with {@code --kv-cache-dtype auto}. Pure.
 */
public final class ModelDtype {
    /** config.json spellings (as {@link ConfigJson#dtype} returns them, "torch." removed). */
    static final Map<String, DType> CONFIG = Map.ofEntries(
            Map.entry("bfloat16", DType.bf16),
            Map.entry("bf16", DType.bf16),
            Map.entry("float16", DType.fp16),
            Map.entry("half", DType.fp16),
            Map.entry("fp16", DType.fp16),
            Map.entry("float32", DType.fp32),
            Map.entry("float", DType.fp32),
            Map.entry("fp32", DType.fp32),
            Map.entry("float8_e4m3fn", DType.fp8),
            Map.entry("float8_e5m2", DType.fp8),
            Map.entry("fp8", DType.fp8));

    /** safetensors header dtypes. */
    static final Map<String, DType> SAFETENSORS = Map.of(
            "BF16", DType.bf16, "F16", DType.fp16, "F32", DType.fp32, "F8_E4M3", DType.fp8, "F8_E5M2", DType.fp8);

    private ModelDtype() {}

    /** The dtype read from the model, or empty when neither config.json nor the headers name one this planner knows. */
    public static Optional<DType> of(ModelStatus model) {
        if (model == null) {
            return Optional.empty();
        }
        if (model.quantization != null && model.quantization.fp8()) {
            return Optional.of(DType.fp8); // config.json's dtype is then that of the tensors left unquantized
        }
        DType declared = config(model.dtype);
        if (declared != null) {
            return Optional.of(declared);
        }
        if (model.weightBytesByDtype == null) {
            return Optional.empty();
        }
        // the dtype with the most bytes; ties by name so the answer never depends on map order
        Comparator<Map.Entry<String, Long>> byBytes = Map.Entry.comparingByValue();
        Comparator<Map.Entry<String, Long>> byName = Map.Entry.comparingByKey();
        return model.weightBytesByDtype.entrySet().stream()
                .filter(e -> e.getValue() != null && SAFETENSORS.containsKey(e.getKey()))
                .max(byBytes.thenComparing(byName.reversed()))
                .map(e -> SAFETENSORS.get(e.getKey()));
    }

    /**
     * The dtype the activations compute in for weights of {@code weights}: an FP8 checkpoint computes in 16 bits, fp16
     * when its config.json says float16 and bf16 otherwise (also when the config is not known); any other model in its
     * own dtype; bf16 when {@code weights} is null.
     *
     * @param configDtype config.json's {@code torch_dtype} / {@code dtype} (status.model.dtype), or null when not read
     */
    public static DType activation(DType weights, String configDtype) {
        if (weights == null) {
            return DType.bf16;
        }
        if (weights != DType.fp8) {
            return weights;
        }
        return config(configDtype) == DType.fp16 ? DType.fp16 : DType.bf16;
    }

    /**
     * The KV cache's element type: the {@link #activation} dtype for {@code auto} (or null), else the one named ({@code
     * fp8} is e4m3, 1 byte).
     */
    public static DType kvCache(KvCacheDtype kv, DType weights, String configDtype) {
        return kv == null || kv == KvCacheDtype.auto ? activation(weights, configDtype) : DType.valueOf(kv.name());
    }

    private static DType config(String dtype) {
        return dtype == null ? null : CONFIG.get(dtype.trim().toLowerCase(Locale.ROOT));
    }
}
