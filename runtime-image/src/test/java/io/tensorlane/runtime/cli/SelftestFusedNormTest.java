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
}
