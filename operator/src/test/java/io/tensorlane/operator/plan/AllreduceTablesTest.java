package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The algorithm table between the API's rows and the contract's {@link AlgorithmTable}: one shape, both ways. */
class AllreduceTablesTest {
    static AlgorithmRange row(long upTo, String algorithm) {
        return new AlgorithmRange(upTo, algorithm);
    }

    @Test
    void statusRowsAndTheRuntimesTableAreTheSameRows() {
        AlgorithmTable t = AlgorithmTable.defaults(false, 8, 8L << 20);
        List<AlgorithmRange> status = AllreduceTables.toStatus(t);
        assertThat(status)
                .extracting(r -> r.upToBytes + ":" + r.algorithm)
                .containsExactly("65536:OneStage", "8388608:Ring");
        AlgorithmTable back = AllreduceTables.toKernelTable(8, "default", status);
        assertThat(back).isEqualTo(t);
        assertThat(AlgorithmTable.fromJson(back.toJson())).isEqualTo(t);
    }

    @Test
    void aMeasuredTableStopsAtTheFirstNcclRow() {
        AlgorithmTable t = AllreduceTables.fromMeasurement(
                4,
                List.of(row(65536, "OneStage"), row(1 << 20, "Ring"), row(4 << 20, "NCCL"), row(8 << 20, "TwoStage")));
        assertThat(t.rows())
                .containsExactly(
                        new AlgorithmTable.Row(65536, Algorithm.OneStage),
                        new AlgorithmTable.Row(1 << 20, Algorithm.Ring));
        // the planner clips it to maxMessageBytes: the last custom algorithm continues up to it
        assertThat(t.clip(8 << 20).select(8 << 20)).isEqualTo(Algorithm.Ring);
    }

    static AlgorithmRange incomplete() {
        AlgorithmRange r = new AlgorithmRange();
        r.algorithm = "Ring";
        return r;
    }

    static Stream<Arguments> badMeasurements() {
        return Stream.of(
                Arguments.of(List.of(row(1024, "NCCL")), "no custom-kernel row"),
                Arguments.of(List.of(), "no custom-kernel row"),
                Arguments.of(List.of(row(2048, "OneStage"), row(1024, "Ring")), "not ascending at 1024 bytes"),
                Arguments.of(List.of(incomplete()), "incomplete row"),
                Arguments.of(List.of(row(1024, "Fast")), "expected one of"));
    }

    @ParameterizedTest
    @MethodSource("badMeasurements")
    void aBadMeasurementIsNamed(List<AlgorithmRange> measured, String message) {
        assertThatThrownBy(() -> AllreduceTables.fromMeasurement(8, measured))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void describeSaysWhereEachAlgorithmHolds() {
        assertThat(AllreduceTables.describe(List.of(row(8 << 20, "OneStage")))).isEqualTo("OneStage");
        assertThat(AllreduceTables.describe(List.of(row(64 << 10, "OneStage"), row(8 << 20, "Ring"))))
                .isEqualTo("OneStage ≤ 64 KiB, Ring above");
    }
}
