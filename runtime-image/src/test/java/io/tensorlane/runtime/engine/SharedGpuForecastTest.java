package io.tensorlane.runtime.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tensorlane.runtime.cli.Args;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SharedGpuForecastTest {
    private static final OptionalInt UNKNOWN = OptionalInt.empty();

    static Stream<Arguments> shareCases() {
        return Stream.of(
                // world sizes, explicit devices, visible GPUs, shared?
                Arguments.of(List.of(2), null, OptionalInt.of(2), false),
                Arguments.of(List.of(2), null, OptionalInt.of(1), true),
                Arguments.of(List.of(8), null, OptionalInt.of(8), false),
                Arguments.of(List.of(2, 3, 4, 5, 6, 7, 8), null, OptionalInt.of(2), true),
                Arguments.of(List.of(2, 3, 4, 5, 6, 7, 8), null, OptionalInt.of(8), false),
                Arguments.of(List.of(2), null, UNKNOWN, true),
                Arguments.of(List.of(2), List.of(0, 1), UNKNOWN, false),
                Arguments.of(List.of(2), List.of(0, 0), OptionalInt.of(4), true),
                Arguments.of(List.of(4), List.of(3, 2, 1, 0), OptionalInt.of(4), false),
                // explicit devices apply to their own world size only; the others are placed by the count
                Arguments.of(List.of(2, 4), List.of(0, 1), OptionalInt.of(2), true),
                Arguments.of(List.of(2, 4), List.of(0, 1), OptionalInt.of(4), false),
                Arguments.of(List.of(), null, UNKNOWN, false));
    }

    @ParameterizedTest
    @MethodSource("shareCases")
    void forecastsWhetherRanksShareAGpu(
            List<Integer> worlds, List<Integer> explicit, OptionalInt visible, boolean shared) {
        assertEquals(shared, SharedGpuForecast.ranksShareAGpu(worlds, explicit, visible));
    }

    /** The forecast agrees with the placement it forecasts ({@link Args#devices}) for every known count and world. */
    @ParameterizedTest
    @MethodSource("counts")
    void agreesWithThePlacement(int gpus) {
        for (int w = 1; w <= 8; w++) {
            List<Integer> placed = Args.devices(w, gpus, null);
            boolean repeats = placed.stream().distinct().count() < placed.size();
            assertEquals(repeats, SharedGpuForecast.ranksShareAGpu(List.of(w), null, OptionalInt.of(gpus)), "w=" + w);
        }
    }

    static Stream<Integer> counts() {
        return Stream.of(1, 2, 3, 4, 8);
    }

    static Stream<Arguments> visibleCases() {
        return Stream.of(
                // CUDA_VISIBLE_DEVICES, driver's GPUs, visible
                Arguments.of(null, OptionalInt.of(8), OptionalInt.of(8)),
                Arguments.of(null, UNKNOWN, UNKNOWN),
                Arguments.of("0,1", UNKNOWN, UNKNOWN),
                Arguments.of("0,1", OptionalInt.of(8), OptionalInt.of(2)),
                Arguments.of(" 3 , 5 ", OptionalInt.of(8), OptionalInt.of(2)),
                Arguments.of("", OptionalInt.of(8), OptionalInt.of(0)),
                Arguments.of("0,9,1", OptionalInt.of(8), OptionalInt.of(1)), // an invalid index ends the list
                Arguments.of("1,1,2", OptionalInt.of(8), OptionalInt.of(1)), // so does a repeated one
                Arguments.of("-1", OptionalInt.of(8), OptionalInt.of(0)),
                Arguments.of("0,1,", OptionalInt.of(8), OptionalInt.of(2)),
                Arguments.of("GPU-5d3e1c1a-0000-0000-0000-000000000000", OptionalInt.of(8), UNKNOWN),
                Arguments.of("0,MIG-1", OptionalInt.of(8), UNKNOWN));
    }

    @ParameterizedTest
    @MethodSource("visibleCases")
    void countsTheGpusCudaWillSee(String visible, OptionalInt driver, OptionalInt expected) {
        assertEquals(expected, SharedGpuForecast.visibleGpus(visible, driver));
    }
}
