package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.HostTensors;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fp64 reference selftest holds the fused allreduce + RMSNorm to (the GPU part runs on the GPU machine). */
class SelftestFusedNormTest {
    private static byte[] bf16(float... v) {
        ByteBuffer b = ByteBuffer.allocate(2 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float f : v) {
            b.putShort(HostTensors.floatToBf16(f));
        }
        return b.array();
    }

    @Test
    void addsTheRanksSumToTheResidualThenNormalizesEachRow() {
        // two ranks, two rows of two: sums (1, 3) and (2, -2); residual (1, 1) and (0, 0); weight (1, 2)
        List<byte[]> partials = List.of(bf16(0.5f, 1, 1, -1), bf16(0.5f, 2, 1, -1));
        float[] residual = {1, 1, 0, 0};
        double[] out = SelftestFusedNorm.reference(partials, residual, bf16(1, 2), DType.bf16, 2, 2, 1);
        double inv0 = 1 / Math.sqrt((4 + 16) / 2.0 + 1e-5); // row 0: residual (2, 4)
        double inv1 = 1 / Math.sqrt((4 + 4) / 2.0 + 1e-5); // row 1: residual (2, -2)
        assertThat(out[0]).isCloseTo(2 * inv0, within(1e-12));
        assertThat(out[1]).isCloseTo(2 * 4 * inv0, within(1e-12));
        assertThat(out[2]).isCloseTo(2 * inv1, within(1e-12));
        assertThat(out[3]).isCloseTo(2 * -2 * inv1, within(1e-12));
    }

    @Test
    void modeZeroStartsTheResidualFromTheSum() {
        List<byte[]> partials = List.of(bf16(3, 4));
        double[] out = SelftestFusedNorm.reference(partials, new float[] {100, 100}, bf16(1, 1), DType.bf16, 1, 2, 0);
        double inv = 1 / Math.sqrt((9 + 16) / 2.0 + 1e-5);
        assertThat(out).containsExactly(new double[] {3 * inv, 4 * inv}, within(1e-12));
    }

    @Test
    void theElementwiseBoundTakesTheRoundedOutputAndCatchesAWrongElement() {
        int rows = 2;
        int hidden = 64;
        List<byte[]> partials = List.of(
                HostTensors.random(DType.bf16, rows * hidden, 1), HostTensors.random(DType.bf16, rows * hidden, 2));
        float[] residual = new float[rows * hidden];
        for (int i = 0; i < residual.length; i++) {
            residual[i] = (i % 7) * 0.25f - 0.75f;
        }
        byte[] weight = HostTensors.random(DType.bf16, hidden, 3);
        double[] ref = SelftestFusedNorm.reference(partials, residual, weight, DType.bf16, rows, hidden, 1);
        // what the kernel stores: the exact result rounded to bf16
        double[] rounded = new double[ref.length];
        for (int i = 0; i < ref.length; i++) {
            rounded[i] = HostTensors.bf16ToFloat(HostTensors.floatToBf16((float) ref[i]));
        }
        assertThat(SelftestFusedNorm.boundViolations(rounded, partials, residual, weight, DType.bf16, rows, hidden, 1))
                .isZero();
        double[] wrong = rounded.clone();
        wrong[70] += 0.05 + Math.abs(wrong[70]) * 0.05; // a few per cent off: far outside the bound
        wrong[3] = -wrong[3] + (wrong[3] == 0 ? 1 : 0);
        assertThat(SelftestFusedNorm.boundViolations(wrong, partials, residual, weight, DType.bf16, rows, hidden, 1))
                .isEqualTo(2);
    }
}
