package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which algorithm an allreduce of a size runs with (Rank.allReduce and the model server's counters use the same). */
class AllreduceRouteTest {
    private static final long MIB = 1 << 20;

    @ParameterizedTest(name = "world {0}, buffers {1} B, table up to {2} B, {3} B -> {4}")
    @CsvSource({
        "4, 8388608, 8388608, 8192, OneStage", // latency-bound: OneStage
        "4, 8388608, 8388608, 1048576, TwoStage", // above 512 KiB: TwoStage
        "2, 8388608, 8388608, 1048576, OneStage", // two ranks: OneStage throughout
        "4, 8388608, 8388608, 8388608, TwoStage", // the table covers its max message
        "4, 8388608, 8388608, 8388609, NCCL", // beyond the table
        "4, 1048576, 8388608, 2097152, NCCL", // the table covers it, the buffers do not
        "4, 8388608, 8388608, 0, NCCL"
    })
    void route(int world, long buffers, long tableMax, long bytes, Algorithm expected) {
        assertThat(Communicator.route(AlgorithmTable.defaults(world, tableMax), buffers, bytes))
                .isEqualTo(expected);
    }

    @ParameterizedTest(name = "a table that says NCCL for {0} B")
    @CsvSource({"1", "4096", "1048575"})
    void aTableThatSaysNcclIsFollowed(long bytes) {
        assertThat(Communicator.route(AlgorithmTable.single(2, Algorithm.NCCL, MIB), 8 * MIB, bytes))
                .isEqualTo(Algorithm.NCCL);
    }
}
