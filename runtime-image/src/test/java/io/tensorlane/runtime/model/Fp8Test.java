package io.tensorlane.runtime.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class Fp8Test {
    /** e4m3fn by hand: (-1)^s x 2^(e-7) x (1 + m/8), subnormals m x 2^-9, NaN at S.1111.111. */
    @ParameterizedTest
    @CsvSource({
        "0x00, 0.0",
        "0x01, 0.001953125", // 2^-9, the smallest subnormal
        "0x07, 0.013671875", // 7 x 2^-9
        "0x08, 0.015625", // 2^-6, the smallest normal
        "0x30, 0.5",
        "0x38, 1.0",
        "0x39, 1.125",
        "0x3f, 1.875",
        "0x40, 2.0",
        "0x57, 15.0",
        "0x77, 240.0",
        "0x7e, 448.0", // the largest finite value (S.1111.110)
        "0x80, -0.0",
        "0xb8, -1.0",
        "0xfe, -448.0"
    })
    void decodeTable(String code, float value) {
        float got = Fp8.decode((byte) Integer.parseInt(code.substring(2), 16));
        assertThat(got).isEqualTo(value);
        assertThat(Float.floatToRawIntBits(got) >>> 31).isEqualTo(Float.floatToRawIntBits(value) >>> 31);
    }

    @Test
    void nanCodes() {
        assertThat(Fp8.decode((byte) 0x7f)).isNaN();
        assertThat(Fp8.decode((byte) 0xff)).isNaN();
        assertThat(Fp8.encode(Float.NaN)).isEqualTo((byte) 0x7f);
    }

    @Test
    void everyFiniteCodeRoundTrips() {
        for (int c = 0; c < 256; c++) {
            if ((c & 0x7f) == 0x7f || c == 0x80) {
                continue; // NaN; -0 encodes as itself but compares equal to +0
            }
            assertThat(Fp8.encode(Fp8.decode((byte) c)) & 0xff)
                    .as("code 0x%02x", c)
                    .isEqualTo(c);
        }
    }

    @ParameterizedTest
    @CsvSource({
        "1.0625, 0x38", // halfway 1.0 / 1.125: the even mantissa (1.0)
        "1.1875, 0x3a", // halfway 1.125 / 1.25: the even mantissa (1.25)
        "1.05, 0x38",
        "1.1, 0x39",
        "0.0009765625, 0x00", // 2^-10, halfway 0 / 2^-9: even (0)
        "0.0015, 0x01",
        "464.0, 0x7e", // beyond 448: saturated
        "1e9, 0x7e",
        "-1000, 0xfe",
        "-0.3, 0xaa" // -(1 + 2/8) x 2^-2 = -0.3125 (0.28125 is farther)
    })
    void encodeRoundsToNearestEvenAndSaturates(float x, String code) {
        assertThat(Fp8.encode(x) & 0xff).isEqualTo(Integer.parseInt(code.substring(2), 16));
    }

    /** A 3 x 130 tensor: two column blocks (128 + 2) in one row block; per-row scales: one per row. */
    @Test
    void dequantizeByHand() {
        int rows = 3;
        int cols = 130;
        byte[] w = new byte[rows * cols];
        w[0] = 0x38; // 1.0 in block (0, 0)
        w[129] = 0x40; // 2.0 in block (0, 1)
        w[2 * cols + 127] = (byte) 0xb8; // -1.0 in block (0, 0), row 2
        w[2 * cols + 128] = 0x01; // 2^-9 in block (0, 1), row 2
        double[] b = Fp8.dequantize(w, new float[] {0.5f, 4f}, WeightType.FP8_BLOCK, rows, cols);
        assertThat(b[0]).isEqualTo(0.5);
        assertThat(b[129]).isEqualTo(8.0);
        assertThat(b[2 * cols + 127]).isEqualTo(-0.5);
        assertThat(b[2 * cols + 128]).isEqualTo(0x1p-7);
        assertThat(b[1]).isEqualTo(0.0);
        double[] r = Fp8.dequantize(w, new float[] {2f, 3f, 0.25f}, WeightType.FP8_ROW, rows, cols);
        assertThat(r[0]).isEqualTo(2.0);
        assertThat(r[129]).isEqualTo(4.0);
        assertThat(r[2 * cols + 127]).isEqualTo(-0.25);
        assertThat(r[2 * cols + 128]).isEqualTo(0x1p-11);
        assertThatThrownBy(() -> Fp8.dequantize(w, new float[] {1f}, WeightType.FP8_BLOCK, rows, cols))
                .hasMessageContaining("1 scales");
    }

    @Test
    void scaleGridShapes() {
        assertThat(WeightType.FP8_BLOCK.scaleRows(300)).isEqualTo(3);
        assertThat(WeightType.FP8_BLOCK.scaleCols(128)).isEqualTo(1);
        assertThat(WeightType.FP8_BLOCK.scaleCols(129)).isEqualTo(2);
        assertThat(WeightType.FP8_ROW.scaleCount(300, 4096)).isEqualTo(300);
        assertThat(WeightType.DENSE.scaleCount(300, 4096)).isZero();
        assertThat(WeightType.FP8_BLOCK.elementBytes(WeightDType.BF16)).isEqualTo(1);
        assertThat(WeightType.DENSE.elementBytes(WeightDType.FP16)).isEqualTo(2);
    }
}
