package io.tensorlane.modelfacts;

import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ModelStatus;
import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The element type the planner sizes KV cache and activations with when {@code spec.model.dtype} is not set: the dtype
 * config.json declares ({@code torch_dtype} / {@code dtype}), else the safetensors dtype that holds most of the weight
 * bytes, else none (the caller keeps bf16). Pure.
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
        if (model.dtype != null) {
            DType d = CONFIG.get(model.dtype.trim().toLowerCase(Locale.ROOT));
            if (d != null) {
                return Optional.of(d);
            }
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
}
