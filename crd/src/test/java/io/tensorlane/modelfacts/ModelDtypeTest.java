package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.ServingSpec.KvCacheDtype;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The dtype the planner uses when the spec names none (fp8 for FP8 weights, else config.json's, else the headers'
 * majority, else none), and the activation and KV-cache dtypes it sizes with.
 */
class ModelDtypeTest {
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("bfloat16", Map.of("BF16", 100L), DType.bf16),
                Arguments.of("float16", Map.of("F16", 100L), DType.fp16),
                Arguments.of("half", Map.of(), DType.fp16),
                Arguments.of("float32", Map.of("F32", 100L), DType.fp32),
                Arguments.of("FLOAT32", Map.of(), DType.fp32),
                Arguments.of("float8_e4m3fn", Map.of("F8_E4M3", 90L, "BF16", 10L), DType.fp8),
                // config.json wins over the headers (an fp32 checkpoint declared as bf16 is served as bf16)
                Arguments.of("bfloat16", Map.of("F32", 100L), DType.bf16),
                // no usable config dtype: the dtype with the most bytes
                Arguments.of(null, Map.of("BF16", 90L, "F32", 10L), DType.bf16),
                Arguments.of(null, Map.of("F16", 10L, "F32", 90L), DType.fp32),
                Arguments.of("int4", Map.of("F8_E4M3", 70L, "BF16", 30L), DType.fp8),
                // a tie is decided by name, not by map order: BF16 before F16
                Arguments.of(null, Map.of("F16", 50L, "BF16", 50L), DType.bf16),
                // nothing known: empty (the planner keeps bf16)
                Arguments.of(null, Map.of(), null),
                Arguments.of("int8", Map.of("I8", 100L), null),
                Arguments.of(null, null, null));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void dtypeFromTheModel(String configDtype, Map<String, Long> bytesByDtype, DType expected) {
        ModelStatus m = new ModelStatus();
        m.dtype = configDtype;
        m.weightBytesByDtype = bytesByDtype == null ? null : new TreeMap<>(bytesByDtype);
        assertThat(ModelDtype.of(m).orElse(null)).isEqualTo(expected);
    }

    @org.junit.jupiter.api.Test
    void noModelNoDtype() {
        assertThat(ModelDtype.of(null)).isEmpty();
    }

    /**
     * The activation and KV-cache dtypes: weights, config.json's dtype, spec.serving.kvCacheDtype → activations, KV cache
     * (auto = the activations', as vLLM's and SGLang's --kv-cache-dtype auto).
     */
    static Stream<Arguments> computeDtypes() {
        return Stream.of(
                Arguments.of(DType.bf16, "bfloat16", KvCacheDtype.auto, DType.bf16, DType.bf16),
                Arguments.of(DType.fp16, "float16", KvCacheDtype.auto, DType.fp16, DType.fp16),
                Arguments.of(DType.fp32, "float32", null, DType.fp32, DType.fp32),
                // an FP8 checkpoint computes in 16 bits: its config's dtype, bf16 when that is not float16 or unknown
                Arguments.of(DType.fp8, "bfloat16", KvCacheDtype.auto, DType.bf16, DType.bf16),
                Arguments.of(DType.fp8, "float16", KvCacheDtype.auto, DType.fp16, DType.fp16),
                Arguments.of(DType.fp8, null, KvCacheDtype.auto, DType.bf16, DType.bf16),
                Arguments.of(DType.fp8, "float8_e4m3fn", null, DType.bf16, DType.bf16),
                // a KV dtype that is named wins
                Arguments.of(DType.fp8, "bfloat16", KvCacheDtype.fp8, DType.bf16, DType.fp8),
                Arguments.of(DType.bf16, "bfloat16", KvCacheDtype.fp8, DType.bf16, DType.fp8),
                Arguments.of(DType.bf16, "bfloat16", KvCacheDtype.fp16, DType.bf16, DType.fp16),
                Arguments.of(DType.fp32, "float32", KvCacheDtype.bf16, DType.fp32, DType.bf16),
                Arguments.of(null, null, KvCacheDtype.auto, DType.bf16, DType.bf16));
    }

    @ParameterizedTest
    @MethodSource("computeDtypes")
    void activationAndKvCacheDtypes(
            DType weights, String configDtype, KvCacheDtype kv, DType activations, DType kvCache) {
        assertThat(ModelDtype.activation(weights, configDtype)).isEqualTo(activations);
        assertThat(ModelDtype.kvCache(kv, weights, configDtype)).isEqualTo(kvCache);
    }
}
