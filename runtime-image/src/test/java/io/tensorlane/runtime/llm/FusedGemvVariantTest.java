package io.tensorlane.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.kernels.Kernels;
import io.tensorlane.runtime.model.Fp8;
import io.tensorlane.runtime.model.WeightType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FusedGemvVariantTest {
    @ParameterizedTest(name = "TENSORLANE_FUSED_GEMV_VARIANT=''{0}'' -> {1}")
    @CsvSource(
            delimiter = ';',
            value = {
                "; BASE",
                "   ; BASE",
                "base; BASE",
                "pipe; PIPE",
                " PIPE ; PIPE",
                "pipe-xf32; PIPE_XF32",
                "Pipe-Xf32-Bits; PIPE_XF32_BITS"
            })
    void parsesTheVariantNames(String value, FusedGemvVariant v) {
        assertThat(FusedGemvVariant.parse(value)).isEqualTo(v);
    }

    @Test
    void aBadValueIsRefusedNamingTheVariableAndTheChoices() {
        assertThatThrownBy(() -> FusedGemvVariant.parse("fast"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(FusedGemvVariant.ENV + "='fast'")
                .hasMessageContaining("base, pipe, pipe-xf32, pipe-xf32-bits");
    }

    @ParameterizedTest(name = "{0} {1} {2} -> {3}")
    @CsvSource({
        "tl_gemv_norm, DENSE, BASE, tl_gemv_norm",
        "tl_gemv_norm, DENSE, PIPE, tl_gemv_norm_p",
        "tl_gemv_norm_silu, DENSE, PIPE_XF32, tl_gemv_norm_silu_px",
        // dense weights have no integer e4m3 decode: the pipe-xf32 kernels
        "tl_gemv_res, DENSE, PIPE_XF32_BITS, tl_gemv_res_px",
        "tl_gemv_res, FP8_ROW, BASE, tl_gemv_res_fp8_row",
        "tl_gemv_res, FP8_ROW, PIPE_XF32_BITS, tl_gemv_res_fp8_row_pxb",
        "tl_gemv_norm, FP8_BLOCK, PIPE, tl_gemv_norm_fp8_block_p",
        "tl_gemv_norm_silu, FP8_BLOCK_ROWS, PIPE_XF32, tl_gemv_norm_silu_fp8_block_px"
    })
    void namesTheKernelOfEachWeightTypeAndVariant(String prefix, WeightType type, FusedGemvVariant v, String name) {
        assertThat(FusedGemvKernels.name(prefix, type, v)).isEqualTo(name);
    }

    @Test
    void everyKernelAVariantNamesIsAmongTheModelKernels() {
        for (String prefix : new String[] {"tl_gemv_norm", "tl_gemv_norm_silu", "tl_gemv_res"}) {
            for (WeightType type : WeightType.values()) {
                for (FusedGemvVariant v : FusedGemvVariant.values()) {
                    assertThat(Kernels.MODEL_TYPED_KERNELS).contains(FusedGemvKernels.name(prefix, type, v));
                }
            }
        }
    }

    /**
     * The rule of pipe-xf32-bits' decode (tl_gemv_fused.cuh e4m3_scaled): byte b in the top byte of an int, shifted
     * right by 4 with its sign, masked to bits 31 and 26..20, is e4m3(b) x 2^-120 as fp32 bits, for every code but NaN.
     */
    @Test
    void theIntegerDecodeIsEveryCodeTimesTwoToTheMinus120() {
        for (int b = 0; b < 256; b++) {
            if ((b & 0x7f) == 0x7f) {
                continue; // e4m3fn's NaN codes: no checkpoint stores them
            }
            int t = b << 24;
            float scaled = Float.intBitsToFloat((t >> 4) & 0x87F00000);
            assertThat(scaled * 0x1p120f).as("code 0x%02x", b).isEqualTo(Fp8.decode((byte) b));
        }
    }
}
