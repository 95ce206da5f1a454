package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.DType;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

class HostTensorsTest {
    static Stream<Arguments> halves() {
        // float, IEEE half bits (round to nearest even)
        return Stream.of(
                Arguments.of(0f, 0x0000),
                Arguments.of(-0f, 0x8000),
                Arguments.of(1f, 0x3C00),
                Arguments.of(-2f, 0xC000),
                Arguments.of(65504f, 0x7BFF),
                Arguments.of(65520f, 0x7C00),
                Arguments.of(1e-8f, 0x0000),
                Arguments.of(5.9604645e-8f, 0x0001),
                Arguments.of(6.1035156e-5f, 0x0400),
                Arguments.of(1.0009765625f, 0x3C01),
                Arguments.of(1.00048828125f, 0x3C00),
                Arguments.of(1.00146484375f, 0x3C02),
                Arguments.of(Float.POSITIVE_INFINITY, 0x7C00),
                Arguments.of(0.1f, 0x2E66));
    }

    @ParameterizedTest
    @MethodSource("halves")
    void floatToHalf(float f, int bits) {
        assertThat(HostTensors.floatToHalf(f) & 0xFFFF).isEqualTo(bits);
    }

    static Stream<Arguments> bf16s() {
        return Stream.of(
                Arguments.of(1f, 0x3F80),
                Arguments.of(-1f, 0xBF80),
                Arguments.of(1.00390625f, 0x3F80), // tie -> even
                Arguments.of(1.01171875f, 0x3F82), // tie -> even (up)
                Arguments.of(3.0e38f, 0x7F62),
                Arguments.of(0.1f, 0x3DCD),
                Arguments.of(Float.NaN, 0x7FC0));
    }

    @ParameterizedTest
    @MethodSource("bf16s")
    void floatToBf16(float f, int bits) {
        assertThat(HostTensors.floatToBf16(f) & 0xFFFF).isEqualTo(bits);
    }

    @Test
    void roundTripsAreExactForRepresentableValues() {
        for (int h = 0; h < 0x7C00; h++) {
            float f = HostTensors.halfToFloat((short) h);
            assertThat(HostTensors.floatToHalf(f) & 0xFFFF).as("half %x", h).isEqualTo(h);
        }
        for (int b = 0; b < 0x7F80; b += 7) {
            assertThat(HostTensors.floatToBf16(HostTensors.bf16ToFloat((short) b)) & 0xFFFF)
                    .isEqualTo(b);
        }
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void randomValuesAreFreshInRangeAndNonZero(DType d) {
        byte[] a = HostTensors.random(d, 1001, 1);
        byte[] b = HostTensors.random(d, 1001, 2);
        assertThat(a).hasSize(1001 * d.bytes()).isNotEqualTo(b);
        double[] x = HostTensors.decode(a, d);
        for (double v : x) {
            assertThat(v).isBetween(-1.0, 1.0);
        }
        assertThat(java.util.Arrays.stream(x).filter(v -> v != 0).count()).isGreaterThan(990);
    }

    @Test
    void referenceAndError() {
        byte[] a = HostTensors.random(DType.fp32, 100, 3);
        byte[] b = HostTensors.random(DType.fp32, 100, 4);
        double[] ref = HostTensors.reference(List.of(a, b), DType.fp32);
        assertThat(ref[7]).isEqualTo(HostTensors.get(a, DType.fp32, 7) + HostTensors.get(b, DType.fp32, 7));
        assertThat(HostTensors.relativeError(ref, ref)).isZero();
        double[] off = ref.clone();
        off[0] = Double.NaN;
        assertThat(HostTensors.relativeError(off, ref)).isInfinite();
        double[] scaled = java.util.Arrays.stream(ref).map(v -> v * 1.01).toArray();
        assertThat(HostTensors.relativeError(scaled, ref)).isCloseTo(0.01, org.assertj.core.data.Offset.offset(1e-9));
        assertThatThrownBy(() -> HostTensors.relativeError(new double[1], ref)).hasMessageContaining("length mismatch");
    }

    @Test
    void elementwiseBoundCatchesWrongSumsButToleratesRoundingUnderCancellation() {
        // two ranks: 1.0 + (-0.99609375) in bf16; exact 0.00390625. A result one bf16 ulp of the inputs away is within
        // the bound.
        byte[] a = bf16(1.0f);
        byte[] b = bf16(-0.99609375f);
        assertThat(HostTensors.boundViolations(new double[] {0.00390625}, List.of(a, b), DType.bf16, 1))
                .isZero();
        assertThat(HostTensors.boundViolations(new double[] {0.00390625 + 0.0039}, List.of(a, b), DType.bf16, 1))
                .isZero(); // half a bf16 ulp at 1.0
        assertThat(HostTensors.boundViolations(new double[] {0.00390625 + 0.03}, List.of(a, b), DType.bf16, 1))
                .isOne();
        assertThat(HostTensors.boundViolations(new double[] {Double.NaN}, List.of(a, b), DType.bf16, 2))
                .isOne();
        assertThat(HostTensors.unitRoundoff(DType.fp16)).isEqualTo(0x1p-11);
    }

    private static byte[] bf16(float f) {
        short s = HostTensors.floatToBf16(f);
        return new byte[] {(byte) s, (byte) (s >> 8)};
    }
}
