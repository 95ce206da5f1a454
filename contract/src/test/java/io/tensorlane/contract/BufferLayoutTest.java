package io.tensorlane.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class BufferLayoutTest {
    private static final long MiB = 1024 * 1024;

    static Stream<Arguments> sizes() {
        // worldSize, maxMessageBytes, blocks, slots, expected rounded max, ipc bytes, total bytes
        return Stream.of(
                // 8 MiB default: signal 1 granule, staging 4, scratch 4, push 2 (2 phases x 8 writers x 256 KiB);
                // state 64*4=256 +64 +8 -> 512; rank-data (4+8192)*64=524544
                Arguments.of(8, 8 * MiB, 64, 8192, 8 * MiB, 22 * MiB, 22 * MiB + 512 + 524544),
                // push: 2 x 2 x 16 bytes -> 1 granule
                Arguments.of(2, 1, 64, 8192, 16, 8 * MiB, 8 * MiB + 512 + 524544),
                Arguments.of(
                        4, 8 * MiB + 1, 64, 0, 8 * MiB + 16, 2 * MiB + 2 * 10 * MiB + 2 * MiB, 24 * MiB + 512 + 256),
                // 1 block: state 4 -> 64 +64 +8 =136 -> 256; rank-data 4*64=256
                Arguments.of(1, 4096, 1, 0, 4096, 8 * MiB, 8 * MiB + 256 + 256),
                // 1024 blocks: flags 1024*16*8*4 = 512 KiB -> 1 granule; state 4096+64+8 -> 4352 (256-aligned);
                // rank-data 5*64=320 -> 512
                Arguments.of(8, 64 * MiB, 1024, 1, 64 * MiB, 134 * MiB, 134 * MiB + 4352 + 512));
    }

    @ParameterizedTest
    @MethodSource("sizes")
    void arithmetic(int ws, long max, int blocks, int slots, long rounded, long ipc, long total) {
        BufferLayout l = BufferLayout.of(ws, max, blocks, slots);
        assertThat(l.maxMessageBytes()).isEqualTo(rounded);
        assertThat(l.ipcBytesPerRank()).isEqualTo(ipc);
        assertThat(l.totalBytesPerRank()).isEqualTo(total);
        assertThat(l.buffers())
                .extracting(DeviceBuffer::name)
                .containsExactly("signal", "staging", "scratch", "push", "state", "rank-data");
        assertThat(l.buffers())
                .allSatisfy(b -> assertThat(b.bytes() % b.alignment()).isZero());
        assertThat(l.buffer("staging").bytes()).isGreaterThanOrEqualTo(l.maxMessageBytes());
        assertThat(l.buffer("signal").bytes()).isGreaterThanOrEqualTo(l.signalFlagBytes());
        assertThat(l.buffer("push").bytes())
                .isGreaterThanOrEqualTo(BufferLayout.PUSH_PHASES * (long) ws * l.pushSlotBytes());
        assertThat(l.buffer("state").bytes())
                .isGreaterThanOrEqualTo(l.pushStateOffset() + BufferLayout.PUSH_STATE_BYTES);
        assertThat(l.pushSlotBytes()).isEqualTo(Math.min(rounded, BufferLayout.PUSH_MAX_MESSAGE_BYTES));
    }

    @Test
    void defaults() {
        BufferLayout l = BufferLayout.of(8, 8 * MiB);
        assertThat(l.blocks()).isEqualTo(BufferLayout.DEFAULT_BLOCKS);
        assertThat(l.graphBufferSlots()).isEqualTo(BufferLayout.DEFAULT_GRAPH_SLOTS);
        assertThat(l.buffers())
                .filteredOn(DeviceBuffer::peerVisible)
                .extracting(DeviceBuffer::name)
                .containsExactly("signal", "staging", "scratch", "push");
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                Arguments.of(0, 4096L, 64, 0, "worldSize must be 1..8, got 0"),
                Arguments.of(9, 4096L, 64, 0, "worldSize must be 1..8, got 9"),
                Arguments.of(2, 0L, 64, 0, "maxMessageBytes must be > 0, got 0"),
                Arguments.of(2, -5L, 64, 0, "maxMessageBytes must be > 0, got -5"),
                Arguments.of(2, (1L << 30) + 1, 64, 0, "maxMessageBytes must be <= 1073741824"),
                Arguments.of(2, 4096L, 0, 0, "blocks must be 1..1024, got 0"),
                Arguments.of(2, 4096L, 2000, 0, "blocks must be 1..1024, got 2000"),
                Arguments.of(2, 4096L, 64, -1, "graphBufferSlots must be 0..1048576, got -1"));
    }

    @ParameterizedTest
    @MethodSource("invalid")
    void rejectsBadArguments(int ws, long max, int blocks, int slots, String message) {
        assertThatThrownBy(() -> BufferLayout.of(ws, max, blocks, slots))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(message);
    }

    @Test
    void constructorRejectsUnroundedSize() {
        assertThatThrownBy(() -> new BufferLayout(2, 100, 64, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("multiple of 16");
    }
}
