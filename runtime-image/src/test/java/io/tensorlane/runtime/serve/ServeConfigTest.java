package io.tensorlane.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.AlgorithmTable;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.contract.EngineEnv;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The plan serve reads from the environment: valid plans and every bad value's message. */
class ServeConfigTest {
    static final String TABLE = AlgorithmTable.defaults(8, 8L << 20).toJson();

    static Map<String, String> planned(String... kv) {
        Map<String, String> env = new HashMap<>(Map.of(
                EngineEnv.WORLD_SIZE,
                "8",
                EngineEnv.ALLREDUCE,
                "Custom",
                EngineEnv.ALGORITHM_TABLE,
                TABLE,
                EngineEnv.MAX_MESSAGE_BYTES,
                "8388608",
                EngineEnv.MEMORY_FRACTION,
                "0.83",
                EngineEnv.PORT,
                "8000"));
        for (int i = 0; i < kv.length; i += 2) {
            if (kv[i + 1] == null) {
                env.remove(kv[i]);
            } else {
                env.put(kv[i], kv[i + 1]);
            }
        }
        return env;
    }

    @Test
    void readsTheRenderedPlan() {
        ServeConfig c = ServeConfig.from(planned(), ServeConfig.Overrides.NONE);
        assertThat(c.worldSize()).isEqualTo(8);
        assertThat(c.allreduce()).isEqualTo(Allreduce.Custom);
        assertThat(c.table().select(43008)).isEqualTo(Algorithm.OneStage);
        assertThat(c.maxMessageBytes()).isEqualTo(8L << 20);
        assertThat(c.memoryFraction()).isEqualTo(0.83);
        assertThat(c.port()).isEqualTo(8000);
        assertThat(c.layout().totalBytesPerRank()).isGreaterThan(2 * (8L << 20));
    }

    @Test
    void virtualRanksOverrideTheWorldSizeAndUseTheDefaultTable() {
        ServeConfig c = ServeConfig.from(planned(), new ServeConfig.Overrides(4, null, null, 0.5, null));
        assertThat(c.worldSize()).isEqualTo(4);
        assertThat(c.table().worldSize()).isEqualTo(4);
        assertThat(c.memoryFraction()).isEqualTo(0.5);
    }

    @Test
    void ncclAndNoneCarryNoBuffers() {
        ServeConfig nccl = ServeConfig.from(
                planned(EngineEnv.ALLREDUCE, "NCCL", EngineEnv.ALGORITHM_TABLE, null), ServeConfig.Overrides.NONE);
        assertThat(nccl.table()).isNull();
        assertThat(nccl.layout()).isNull();
        ServeConfig one = ServeConfig.from(
                planned(EngineEnv.WORLD_SIZE, "1", EngineEnv.ALLREDUCE, "None"), ServeConfig.Overrides.NONE);
        assertThat(one.allreduce()).isEqualTo(Allreduce.None);
    }

    static Stream<Arguments> bad() {
        return Stream.of(
                Arguments.of(planned(EngineEnv.MEMORY_FRACTION, null), "TENSORLANE_MEMORY_FRACTION is not set"),
                Arguments.of(
                        planned(EngineEnv.MEMORY_FRACTION, "1.2"),
                        "TENSORLANE_MEMORY_FRACTION must be a number in (0, 1), got 1.2"),
                Arguments.of(
                        planned(EngineEnv.MEMORY_FRACTION, "lots"),
                        "TENSORLANE_MEMORY_FRACTION must be a number in (0, 1), got 'lots'"),
                Arguments.of(planned(EngineEnv.WORLD_SIZE, "9"), "TENSORLANE_WORLD_SIZE must be 1..8, got 9"),
                Arguments.of(
                        planned(EngineEnv.WORLD_SIZE, "eight"),
                        "TENSORLANE_WORLD_SIZE must be an integer, got 'eight'"),
                Arguments.of(
                        planned(EngineEnv.ALLREDUCE, "Fast"),
                        "TENSORLANE_ALLREDUCE must be Custom, NCCL or None, got 'Fast'"),
                Arguments.of(
                        planned(EngineEnv.ALLREDUCE, "None"),
                        "TENSORLANE_ALLREDUCE=None is only valid with world size 1"),
                Arguments.of(
                        planned(EngineEnv.ALGORITHM_TABLE, "{not json"),
                        "TENSORLANE_ALGORITHM_TABLE: invalid algorithm table JSON"),
                Arguments.of(
                        planned(
                                EngineEnv.ALGORITHM_TABLE,
                                AlgorithmTable.defaults(4, 8L << 20).toJson()),
                        "TENSORLANE_ALGORITHM_TABLE is for world size 4 but TENSORLANE_WORLD_SIZE is 8"),
                Arguments.of(
                        planned(EngineEnv.MAX_MESSAGE_BYTES, "1048576"),
                        "TENSORLANE_ALGORITHM_TABLE covers messages up to 8388608 bytes but TENSORLANE_MAX_MESSAGE_BYTES is 1048576"),
                Arguments.of(
                        planned(EngineEnv.MAX_MESSAGE_BYTES, "8"),
                        "TENSORLANE_MAX_MESSAGE_BYTES must be 16..1073741824"),
                Arguments.of(planned(EngineEnv.PORT, "70000"), "TENSORLANE_PORT must be 1..65535, got 70000"),
                Arguments.of(
                        planned(EngineEnv.PORT, "http", EngineEnv.WORLD_SIZE, "x"),
                        "TENSORLANE_WORLD_SIZE must be an integer, got 'x'; TENSORLANE_PORT must be an integer, got 'http'"));
    }

    @ParameterizedTest
    @MethodSource("bad")
    void badPlansGetClearMessages(Map<String, String> env, String message) {
        assertThatThrownBy(() -> ServeConfig.from(env, ServeConfig.Overrides.NONE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void stepShapeIncludesTheSeedsAttentionCase() {
        assertThat(StepShape.DEFAULT.messageBytes(4)).isEqualTo(42 * 1024);
        assertThatThrownBy(() -> new StepShape(0, 5376, java.util.List.of(4)))
                .hasMessageContaining("--layers must be 1..1024");
        assertThatThrownBy(() -> new StepShape(4, 100, java.util.List.of(4)))
                .hasMessageContaining("--hidden must be a multiple of 8");
    }
}
