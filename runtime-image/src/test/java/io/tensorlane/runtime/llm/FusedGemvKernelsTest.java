package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.runtime.model.WeightType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FusedGemvKernelsTest {
    @ParameterizedTest(name = "{0} in={1}: residual {2}, norm {3}")
    @CsvSource({
        // Llama-3.1-8B's linears: qkv / gate_up (4096, normed), o (4096), down (14336: wider than the staged x)
        "DENSE, 4096, true, true",
        "DENSE, 14336, true, false",
        "FP8_ROW, 14336, true, false",
        "FP8_BLOCK, 8192, true, true",
        "DENSE, 8200, true, false",
        // whole 16-byte chunks: 8 elements of T, 16 FP8 codes
        "DENSE, 8, true, true",
        "DENSE, 12, false, false",
        "FP8_BLOCK, 8, false, false",
        "FP8_BLOCK_ROWS, 1040, true, true",
        "DENSE, 0, false, false"
    })
    void shapesTheKernelsTake(WeightType type, int in, boolean residual, boolean norm) {
        assertThat(FusedGemvKernels.fits(type, in)).isEqualTo(residual);
        assertThat(FusedGemvKernels.normFits(type, in)).isEqualTo(norm);
    }
}
