package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.DType;
import io.tensorlane.contract.EngineEnv;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KvCacheDtypeTest {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"auto, AUTO", "bf16, BF16", "fp16, FP16", "fp8, FP8", "FP8, FP8", "' fp8 ', FP8", "Auto, AUTO"})
    void theOperatorsNamesParse(String value, KvCacheDtype want) {
        assertThat(KvCacheDtype.parse(value, "--kv-cache-dtype")).isEqualTo(want);
    }

    @ParameterizedTest(name = "''{0}'' is refused")
    @CsvSource({"fp8_e5m2", "float16", "int8", "''", "fp32"})
    void otherValuesNameTheSourceAndTheChoices(String value) {
        assertThatThrownBy(() -> KvCacheDtype.parse(value, "--kv-cache-dtype"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("--kv-cache-dtype must be auto, bf16, fp16 or fp8")
                .hasMessageContaining("got '" + value + "'");
    }

    @Test
    void theOptionWinsOverTheEnvironmentWhichWinsOverAuto() {
        Map<String, String> env = Map.of(EngineEnv.KV_CACHE_DTYPE, "fp8");
        assertThat(KvCacheDtype.of(null, env)).isEqualTo(KvCacheDtype.FP8);
        assertThat(KvCacheDtype.of("auto", env)).isEqualTo(KvCacheDtype.AUTO);
        assertThat(KvCacheDtype.of(null, Map.of())).isEqualTo(KvCacheDtype.AUTO);
        assertThat(KvCacheDtype.of(null, Map.of(EngineEnv.KV_CACHE_DTYPE, " "))).isEqualTo(KvCacheDtype.AUTO);
        assertThatThrownBy(() -> KvCacheDtype.of(null, Map.of(EngineEnv.KV_CACHE_DTYPE, "e4m3")))
                .hasMessageContaining(EngineEnv.KV_CACHE_DTYPE + " must be")
                .hasMessageContaining("'e4m3'");
    }

    @Test
    void fp8IsOneByteAndSixteenBitsAreTheActivations() {
        assertThat(KvCacheDtype.FP8.elementBytes(DType.bf16)).isEqualTo(1);
        assertThat(KvCacheDtype.FP8.elementBytes(DType.fp16)).isEqualTo(1);
        assertThat(KvCacheDtype.AUTO.elementBytes(DType.bf16)).isEqualTo(2);
        assertThat(KvCacheDtype.AUTO.elementBytes(DType.fp16)).isEqualTo(2);
        assertThat(KvCacheDtype.BF16.elementBytes(DType.bf16)).isEqualTo(2);
        assertThat(KvCacheDtype.FP16.elementBytes(DType.fp16)).isEqualTo(2);
        assertThat(KvCacheDtype.BF16.elementBytes(DType.fp16)).isEqualTo(2);
    }

    /** A 16-bit cache stays in the activations' dtype (the same bytes, so the plan's tokens hold); the engine says so. */
    @Test
    void aSixteenBitDtypeOtherThanTheActivationsIsNoted() {
        assertThat(KvCacheDtype.BF16.note(DType.fp16))
                .isEqualTo("KV cache dtype bf16 asked, the model computes in fp16: the 16-bit KV cache is kept in fp16 "
                        + "(the same bytes a token)");
        assertThat(KvCacheDtype.FP16.note(DType.bf16)).contains("kept in bf16");
        assertThat(KvCacheDtype.BF16.note(DType.bf16)).isNull();
        assertThat(KvCacheDtype.FP16.note(DType.fp16)).isNull();
        assertThat(KvCacheDtype.AUTO.note(DType.fp16)).isNull();
        assertThat(KvCacheDtype.FP8.note(DType.bf16)).isNull();
    }
}
