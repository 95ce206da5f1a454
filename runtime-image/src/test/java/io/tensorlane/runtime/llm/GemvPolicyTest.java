package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.llm.GemvPolicy.Linear;
import java.util.EnumSet;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** TENSORLANE_GEMV's values and which linears of which steps take the GEMV kernel (the kernel: kernelcheck, GPU). */
class GemvPolicyTest {
    @ParameterizedTest(name = "''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {
                "off; off",
                "OFF; off",
                "all; qkv,o,gate_up,down",
                "qkv; qkv",
                "down,qkv; qkv,down",
                " o , down ; o,down",
                "gate_up; gate_up"
            })
    void parsesWhatItNames(String value, String policy) {
        assertThat(GemvPolicy.parse(value)).hasToString(policy);
    }

    @ParameterizedTest(name = "unset or blank ''{0}'' is the default")
    @ValueSource(strings = {"", "  "})
    void blankIsTheDefault(String value) {
        assertThat(GemvPolicy.parse(value)).isEqualTo(GemvPolicy.DEFAULT);
        assertThat(GemvPolicy.parse(null)).isEqualTo(GemvPolicy.DEFAULT);
    }

    @ParameterizedTest(name = "''{0}'' is refused")
    @ValueSource(strings = {"on", "qkv,lm_head", "qkv,", "yes"})
    void unknownNamesAreRefusedWithTheChoices(String value) {
        assertThatThrownBy(() -> GemvPolicy.parse(value))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(GemvPolicy.ENV)
                .hasMessageContaining("qkv, o, gate_up, down");
    }

    @ParameterizedTest(name = "{0} tokens, in {1}, linear {2} of 'qkv,o': {3}")
    @CsvSource({
        "1, 4096, QKV, true",
        "1, 14336, O, true",
        "2, 4096, QKV, false", // more than one token: cuBLAS
        "0, 4096, QKV, false",
        "1, 4100, QKV, false", // rows not of whole 16-byte chunks
        "1, 4096, DOWN, false", // not in the policy
        "2, 14336, GATE_UP, false"
    })
    void usesTheKernelOnlyForListedLinearsOfFittingSteps(int n, int in, Linear l, boolean use) {
        GemvPolicy p = new GemvPolicy(EnumSet.of(Linear.QKV, Linear.O));
        assertThat(p.use(l, n, in)).isEqualTo(use);
        assertThat(GemvPolicy.OFF.use(l, n, in)).isFalse();
    }
}
