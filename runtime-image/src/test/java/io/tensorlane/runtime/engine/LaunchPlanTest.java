package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.BufferLayout;
import io.tensorlane.contract.DType;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LaunchPlanTest {
    static Stream<Arguments> residency() {
        // layout blocks, resident per SM, SMs, ranks on device -> max blocks (H200: 132 SMs, 2 resident blocks of 512
        // threads)
        return Stream.of(
                Arguments.of(64, 2, 132, 1, 64),
                Arguments.of(64, 2, 132, 4, 64),
                Arguments.of(64, 2, 132, 5, 52),
                Arguments.of(64, 2, 132, 8, 33),
                Arguments.of(64, 1, 132, 8, 16),
                Arguments.of(1024, 2, 188, 1, 376));
    }

    @ParameterizedTest
    @MethodSource("residency")
    void virtualRanksShareTheResidentCapacity(int layout, int perSm, int sms, int ranks, int expected) {
        assertThat(LaunchPlan.maxBlocks(layout, perSm, sms, ranks)).isEqualTo(expected);
    }

    @Test
    void refusesWhatCannotBeCoResident() {
        assertThatThrownBy(() -> LaunchPlan.maxBlocks(64, 1, 4, 8)).hasMessageContaining("cannot be co-resident");
        assertThatThrownBy(() -> LaunchPlan.maxBlocks(64, 0, 4, 8)).hasMessageContaining(">= 1");
    }

    static Stream<Arguments> grids() {
        return Stream.of(
                Arguments.of(1L, DType.bf16, 64, 1),
                Arguments.of(4096L, DType.bf16, 64, 1),
                Arguments.of(4097L, DType.bf16, 64, 2),
                Arguments.of(2048L, DType.fp32, 64, 1),
                Arguments.of(2049L, DType.fp32, 64, 2),
                Arguments.of(1L << 26, DType.bf16, 33, 33));
    }

    @ParameterizedTest
    @MethodSource("grids")
    void oneVectorPerThreadAtMost(long count, DType d, int max, int expected) {
        assertThat(LaunchPlan.blocksFor(count, d, max)).isEqualTo(expected);
    }

    @Test
    void configValidation() {
        BufferLayout l = BufferLayout.of(2, 1 << 20);
        AlgorithmTable t = AlgorithmTable.defaults(2, 1 << 20);
        assertThat(new CommunicatorConfig(List.of(0, 0), l, t, 100).virtual()).isTrue();
        assertThat(new CommunicatorConfig(List.of(1, 0), l, t, 100).virtual()).isFalse();
        assertThat(CommunicatorConfig.sharesAGpu(List.of(0, 1, 2, 1))).isTrue();
        assertThat(CommunicatorConfig.sharesAGpu(List.of(3, 2, 1, 0))).isFalse();
        assertThat(new CommunicatorConfig(List.of(0, 1), l, t, 100).ranksOn(1)).isEqualTo(1);
        assertThatThrownBy(() -> new CommunicatorConfig(List.of(0), l, t, 100))
                .hasMessageContaining("layout is for 2 ranks but 1 devices");
        assertThatThrownBy(() -> new CommunicatorConfig(List.of(0, -1), l, t, 100))
                .hasMessageContaining(">= 0");
        assertThatThrownBy(() -> new CommunicatorConfig(List.of(0, 1), l, AlgorithmTable.defaults(4, 1 << 20), 100))
                .hasMessageContaining("table is for world size 4");
        assertThatThrownBy(() -> new CommunicatorConfig(List.of(0, 1), l, AlgorithmTable.defaults(2, 2 << 20), 100))
                .hasMessageContaining("buffers hold at most");
        assertThatThrownBy(() -> new CommunicatorConfig(List.of(0, 1), l, t, 0)).hasMessageContaining("timeoutMillis");
        assertThat(CommunicatorConfig.of(List.of(0, 1, 2), 8 << 20).timeoutMillis())
                .isEqualTo(2000);
    }
}
