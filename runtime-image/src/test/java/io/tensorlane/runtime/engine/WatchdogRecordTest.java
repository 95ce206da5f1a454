package io.tensorlane.runtime.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.contract.Algorithm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class WatchdogRecordTest {
    /** Bytes as struct TlError lays them out. */
    static byte[] record(
            int magic,
            int rank,
            int peer,
            int slot,
            int block,
            int epoch,
            int algo,
            int world,
            long waited,
            long timeout) {
        ByteBuffer b = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(magic)
                .putInt(rank)
                .putInt(peer)
                .putInt(slot)
                .putInt(block)
                .putInt(epoch)
                .putInt(algo)
                .putInt(world)
                .putLong(waited)
                .putLong(timeout)
                .putInt(7);
        return b.array();
    }

    static Stream<Arguments> messages() {
        return Stream.of(
                Arguments.of(
                        0,
                        0,
                        2,
                        "rank 3 did not arrive within 2000 ms (rank 0 waited at the OneStage start barrier, block 5, call 17)"),
                Arguments.of(
                        1,
                        1,
                        8,
                        "rank 3 did not arrive within 2000 ms (rank 0 waited at the TwoStage mid barrier, block 5, call 17)"),
                Arguments.of(
                        0,
                        2,
                        8,
                        "rank 3 did not arrive within 2000 ms (rank 0 waited at the OneStage end barrier, block 5, call 17)"),
                Arguments.of(
                        2,
                        0,
                        8,
                        "rank 3 did not arrive within 2000 ms (rank 0 waited at the Ring ring handshake, block 5, call 17)"),
                Arguments.of(
                        2,
                        3,
                        8,
                        "rank 3 did not arrive within 2000 ms (rank 0 waited at the Ring reduce-scatter step 2, block 5, call 17)"),
                Arguments.of(
                        2,
                        9,
                        8,
                        "rank 3 did not arrive within 2000 ms (rank 0 waited at the Ring all-gather step 1, block 5, call 17)"),
                Arguments.of(
                        0,
                        16,
                        2,
                        "rank 3 did not arrive within 2000 ms (rank 0 waited at the OneStage push variant's receive, block"
                                + " 5, call 17)"));
    }

    @ParameterizedTest
    @MethodSource("messages")
    void decodesAndExplains(int algo, int slot, int world, String message) {
        WatchdogRecord r = WatchdogRecord.decode(
                        record(WatchdogRecord.MAGIC, 0, 3, slot, 5, 17, algo, world, 2_000_100_000L, 2_000_000_000L))
                .orElseThrow();
        assertThat(r.message()).isEqualTo(message);
        assertThat(r.seen()).isEqualTo(7);
        assertThat(new AllreduceTimeoutException(r)).hasMessage(message);
    }

    @Test
    void emptyWhenNoError() {
        assertThat(WatchdogRecord.decode(new byte[64])).isEmpty();
    }

    @Test
    void rejectsPartialAndCorruptRecords() {
        assertThatThrownBy(() -> WatchdogRecord.decode(record(0xFFFFFFFF, 0, 1, 0, 0, 1, 0, 2, 0, 0)))
                .hasMessageContaining("incomplete or corrupt");
        assertThatThrownBy(() -> WatchdogRecord.decode(record(WatchdogRecord.MAGIC, 0, 1, 0, 0, 1, 9, 2, 0, 0)))
                .hasMessageContaining("unknown algorithm code 9");
        assertThatThrownBy(() -> WatchdogRecord.decode(new byte[10])).hasMessageContaining("needs 64 bytes");
        assertThat(WatchdogRecord.decode(record(WatchdogRecord.MAGIC, 1, 0, 0, 0, 1, 2, 2, 0, 0))
                        .orElseThrow()
                        .algorithm())
                .isEqualTo(Algorithm.Ring);
    }
}
