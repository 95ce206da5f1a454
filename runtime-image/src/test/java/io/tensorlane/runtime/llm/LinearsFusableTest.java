package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.model.WeightType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LinearsFusableTest {
    @ParameterizedTest(name = "fused={0} gemv={1} mma={2} {3} {4} in={5} -> {6}")
    @CsvSource({
        // Llama-3.1-8B at TP 1: every linear fuses, down's 14,336 columns included (no staged x there)
        "true, all, AUTO, QKV, DENSE, 4096, true",
        "true, all, AUTO, O, DENSE, 4096, true",
        "true, all, AUTO, GATE_UP, DENSE, 4096, true",
        "true, all, AUTO, DOWN, DENSE, 14336, true",
        // block-scaled FP8 fuses under auto (the fused warp kernels beat the tensor cores), not when they are forced
        "true, all, AUTO, DOWN, FP8_BLOCK, 14336, true",
        "true, all, ON, QKV, FP8_BLOCK, 4096, false",
        "true, all, OFF, GATE_UP, FP8_ROW, 4096, true",
        // the normed linears stage x in shared memory: at most 8,192 columns
        "true, all, AUTO, GATE_UP, DENSE, 14336, false",
        "true, all, AUTO, QKV, DENSE, 8192, true",
        // switched off, or a linear the GEMV policy leaves to cuBLAS
        "false, all, AUTO, O, DENSE, 4096, false",
        "true, 'qkv,o,gate_up', AUTO, DOWN, DENSE, 14336, false",
        "true, off, AUTO, QKV, DENSE, 4096, false",
        // rows of whole 16-byte chunks: 8 elements of T, 16 FP8 codes
        "true, all, AUTO, O, FP8_ROW, 1032, false",
        "true, all, AUTO, O, DENSE, 1032, true"
    })
    void decidesPerLinear(
            boolean fused, String gemv, GemvMma mma, GemvPolicy.Linear l, WeightType t, int in, boolean expected) {
        assertThat(Linears.fusable(fused, GemvPolicy.parse(gemv), mma, l, t, in))
                .isEqualTo(expected);
    }
}
