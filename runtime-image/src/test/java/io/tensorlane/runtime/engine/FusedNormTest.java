package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.DType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * When the fused allreduce + RMSNorm stands for the two apart (the kernel itself: device-models' fused-on against
 * fused-off runs, bitwise, on the GPU machine).
 */
class FusedNormTest {
    @ParameterizedTest(name = "world {0}, {1}, {2}, {3} rows x {4} -> {5}")
    @CsvSource({
        "2, OneStage, bf16, 1, 4096, true",
        "8, OneStage, fp16, 8, 4096, true",
        "2, OneStage, bf16, 8, 16384, true", // 32 KiB of shared memory: the limit
        "1, OneStage, bf16, 1, 4096, false", // one rank has no allreduce
        "2, TwoStage, bf16, 1, 4096, false", // the table's algorithm for the message keeps its kernel
        "2, Ring, bf16, 1, 4096, false",
        "2, NCCL, bf16, 1, 4096, false",
        "2, OneStage, bf16, 9, 4096, false", // more rows than measured faster
        "2, OneStage, fp32, 1, 4096, false", // no fp32 entry
        "2, OneStage, bf16, 1, 4100, false", // rows of whole 16-byte packs only
        "2, OneStage, fp16, 1, 4092, false",
        "2, OneStage, bf16, 1, 16392, false", // past 32 KiB of shared memory
    })
    void fitsOnlyOneStagesSmallModelMessages(
            int world, Algorithm routed, DType dtype, int rows, int hidden, boolean fits) {
        assertThat(FusedNorm.fits(world, routed, dtype, rows, hidden)).isEqualTo(fits);
    }

    @Test
    void messageAndSharedMemoryFollowTheRows() {
        FusedNorm f = new FusedNorm(8, 4096, DType.bf16, 0x1000, 0x2000, 0x3000, 1e-5f, 1);
        assertThat(f.count()).isEqualTo(8L * 4096);
        assertThat(f.bytes()).isEqualTo(8L * 4096 * 2);
        assertThat(f.sharedBytes()).isEqualTo(4096 * 2);
    }

    @Test
    void refusesEmptyShapesAndUnknownModes() {
        assertThatThrownBy(() -> new FusedNorm(0, 4096, DType.bf16, 1, 1, 1, 1e-5f, 1))
                .hasMessageContaining("rows and hidden must be >= 1");
        assertThatThrownBy(() -> new FusedNorm(1, 4096, DType.bf16, 1, 1, 1, 1e-5f, 2))
                .hasMessageContaining("mode must be 0");
    }
}
