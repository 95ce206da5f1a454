package io.tensorlane.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ArgsTest {
    static Stream<Arguments> lists() {
        return Stream.of(
                Arguments.of("2..8", List.of(2, 3, 4, 5, 6, 7, 8)),
                Arguments.of("2,4,8", List.of(2, 4, 8)),
                Arguments.of("2..3, 8", List.of(2, 3, 8)),
                Arguments.of("5", List.of(5)));
    }

    @ParameterizedTest
    @MethodSource("lists")
    void intLists(String spec, List<Integer> expected) {
        assertThat(Args.intList(spec)).isEqualTo(expected);
    }

    static Stream<Arguments> badLists() {
        return Stream.of(
                Arguments.of("8..2", "is empty"),
                Arguments.of("two", "not a list of integers"),
                Arguments.of(",", "empty list"));
    }

    @ParameterizedTest
    @MethodSource("badLists")
    void badIntLists(String spec, String message) {
        assertThatThrownBy(() -> Args.intList(spec))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    static Stream<Arguments> sizes() {
        return Stream.of(
                Arguments.of("4096", 4096L),
                Arguments.of("42KiB", 43008L),
                Arguments.of("64MiB", 64L << 20),
                Arguments.of("1GiB", 1L << 30),
                Arguments.of("8k", 8192L),
                Arguments.of("2M", 2L << 20),
                Arguments.of("16", 16L));
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void bytes(String spec, long expected) {
        assertThat(Args.bytes(spec)).isEqualTo(expected);
    }

    @Test
    void badBytes() {
        assertThatThrownBy(() -> Args.bytes("lots")).hasMessageContaining("not a size");
        assertThatThrownBy(() -> Args.bytes("-5")).hasMessageContaining("not a size");
    }

    static Stream<Arguments> deviceMaps() {
        return Stream.of(
                Arguments.of(4, 1, null, List.of(0, 0, 0, 0)),
                Arguments.of(4, 2, null, List.of(0, 1, 0, 1)),
                Arguments.of(2, 8, null, List.of(0, 1)),
                Arguments.of(3, 8, List.of(5, 6, 7), List.of(5, 6, 7)));
    }

    @ParameterizedTest
    @MethodSource("deviceMaps")
    void devices(int world, int count, List<Integer> explicit, List<Integer> expected) {
        assertThat(Args.devices(world, count, explicit)).isEqualTo(expected);
    }

    @Test
    void badDevices() {
        assertThatThrownBy(() -> Args.devices(2, 1, List.of(0)))
                .hasMessageContaining("lists 1 devices for world size 2");
        assertThatThrownBy(() -> Args.devices(2, 1, List.of(0, 3))).hasMessageContaining("device 3 does not exist");
        assertThatThrownBy(() -> Args.devices(2, 0, null)).hasMessageContaining("no CUDA device");
    }

    @Test
    void human() {
        assertThat(Args.human(43008)).isEqualTo("42 KiB");
        assertThat(Args.human(64L << 20)).isEqualTo("64 MiB");
        assertThat(Args.human(1482910)).isEqualTo("1482910 B");
    }
}
