package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.model.WeightType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The fused MoE decode kernels' preconditions, checked before anything reaches the GPU (no {@link ModelKernels} here:
 * a launch would fail on it, so every accepted call below has no work).
 */
class MoeDecodeKernelsTest {
    private final MoeDecodeKernels k = new MoeDecodeKernels(null);
    private static final long A = 0x1000; // 16-byte aligned

    @Test
    void theRouterTakesAtMostEightTokens() {
        assertThatThrownBy(() -> k.router(DType.bf16, A, A, A, A, 9, 2048, 128, 8, true, A, A, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("9 tokens (at most " + MoeDecodeKernels.ROUTER_MAX_TOKENS);
        assertThatCode(() -> k.router(DType.bf16, A, A, A, A, 0, 2048, 128, 8, true, A, A, null))
                .doesNotThrowAnyException();
    }

    @ParameterizedTest(name = "{0} experts, top-{1} refused")
    @CsvSource({"513, 8", "128, 0", "8, 9", "128, 33"})
    void theRouterRefusesExpertsAndTopKOutOfRange(int experts, int topK) {
        assertThatThrownBy(() -> k.router(DType.bf16, A, A, A, A, 1, 2048, experts, topK, true, A, A, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tl_moe_router: " + experts + " experts");
    }

    @Test
    void theRouterNeedsItsCounter() {
        assertThatThrownBy(() -> k.router(DType.bf16, A, A, A, 0, 1, 2048, 128, 8, true, A, A, null))
                .hasMessageContaining("counter");
    }

    /** The norm + router kernel's refusals (it always launches one token, so no accepted call here). */
    @Test
    void theNormAndRouterKernelRefusesWhatItCannotTake() {
        assertThatThrownBy(() -> k.routerNorm(DType.bf16, A, A, 1e-6f, A, A, A, A, 8200, 128, 8, true, A, A, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tl_moe_router_norm: hidden 8200 exceeds the row staged in shared memory ("
                        + FusedGemvKernels.MAX_IN + ")");
        assertThatThrownBy(() -> k.routerNorm(DType.bf16, A, A, 1e-6f, A, A, A, A, 2048, 513, 8, true, A, A, null))
                .hasMessageContaining("tl_moe_router_norm: 513 experts");
        assertThatThrownBy(() -> k.routerNorm(DType.bf16, A, A, 1e-6f, A, A, A, 0, 2048, 128, 8, true, A, A, null))
                .hasMessageContaining("tl_moe_router_norm: counter must be device memory");
        assertThatThrownBy(() -> k.routerNorm(DType.bf16, A, A, 1e-6f, A, A + 2, A, A, 2048, 128, 8, true, A, A, null))
                .hasMessageContaining("tl_moe_router_norm: rows of in % 8 == 0 need 16-byte aligned x and w");
    }

    @Test
    void vectorRowsNeedAlignedPointersAndOtherWidthsDoNot() {
        assertThatThrownBy(() -> k.gateUpSilu(DType.bf16, A + 2, A, A, A, 1, 8, 2048, 768, null))
                .hasMessageContaining("tl_moe_gate_up_silu: rows of in % 8 == 0 need 16-byte aligned x and w");
        assertThatThrownBy(() -> k.downSum(DType.bf16, A, A + 8, A, false, A, A, 1, 8, 768, 2048, null))
                .hasMessageContaining("tl_moe_down_sum: rows of in % 8 == 0");
        assertThatThrownBy(() -> k.downSum(DType.bf16, A, A + 8, A, true, A, A, 1, 8, 768, 2048, null))
                .hasMessageContaining("tl_moe_down_sum_res: rows of in % 8 == 0");
        assertThatThrownBy(() -> k.downSumFp8(
                        DType.bf16, WeightType.FP8_BLOCK, A + 8, A, A, A, false, A, A, 1, 8, 768, 2048, null))
                .hasMessageContaining("tl_moe_down_sum_fp8_block: rows of in % 16 == 0");
        // 351 columns: the scalar loops, any alignment (n = 0: nothing launched)
        assertThatCode(() -> k.downSum(DType.bf16, A + 2, A + 2, A, false, A, A, 0, 2, 351, 448, null))
                .doesNotThrowAnyException();
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"FP8_BLOCK, _block", "FP8_BLOCK_ROWS, _block", "FP8_ROW, _row"})
    void fp8EntriesByScaleLayout(WeightType type, String suffix) {
        assertThat(Fp8Kernels.kernel("tl_moe_down_sum_fp8", type)).isEqualTo("tl_moe_down_sum_fp8" + suffix);
    }

    @Test
    void aDenseWeightHasNoFp8Entry() {
        assertThatThrownBy(() -> k.gateUpSiluFp8(DType.bf16, WeightType.DENSE, A, A, A, A, A, 1, 8, 2048, 768, null))
                .hasMessageContaining("a dense weight has no FP8 kernel");
    }
}
