package io.tensorlane.runtime.engine;

import io.tensorlane.contract.Algorithm;
import io.tensorlane.contract.BufferLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;

/**
 * The kernel watchdog's error record (struct TlError in tl_allreduce.cuh, 64 bytes, little endian): which rank
 * gave up waiting for which peer at which stage.
 */
public record WatchdogRecord(
        int rank,
        int peer,
        int slot,
        int block,
        long epoch,
        Algorithm algorithm,
        int world,
        long waitedNanos,
        long timeoutNanos,
        long seen) {
    public static final int MAGIC = 0x544C4552;
    public static final int BYTES = 64;

    /** Decodes a record; empty when no error was recorded. */
    public static Optional<WatchdogRecord> decode(byte[] raw) {
        if (raw.length < BYTES) {
            throw new IllegalArgumentException("watchdog record needs " + BYTES + " bytes, got " + raw.length);
        }
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        int magic = b.getInt(0);
        if (magic == 0) {
            return Optional.empty();
        }
        if (magic != MAGIC) {
            // 0xFFFFFFFF: a block is still filling the record in; anything else: corrupted state buffer
            throw new IllegalStateException(
                    String.format("watchdog record is incomplete or corrupt (magic 0x%08x)", magic));
        }
        int algo = b.getInt(24);
        Algorithm a = switch (algo) {
            case 0 -> Algorithm.OneStage;
            case 1 -> Algorithm.TwoStage;
            case 2 -> Algorithm.Ring;
            default -> throw new IllegalStateException("watchdog record names unknown algorithm code " + algo);
        };
        return Optional.of(new WatchdogRecord(
                b.getInt(4),
                b.getInt(8),
                b.getInt(12),
                b.getInt(16),
                Integer.toUnsignedLong(b.getInt(20)),
                a,
                b.getInt(28),
                b.getLong(32),
                b.getLong(40),
                Integer.toUnsignedLong(b.getInt(48))));
    }

    /** Human name of the stage a slot stands for (mirrors the TL_SLOT_* and ring slot scheme). */
    public String stage() {
        if (slot == BufferLayout.PUSH_WAIT_SLOT) {
            return "push variant's receive";
        }
        if (slot == 0) {
            return algorithm == Algorithm.Ring ? "ring handshake" : "start barrier";
        }
        if (algorithm == Algorithm.Ring) {
            return slot < world ? "reduce-scatter step " + (slot - 1) : "all-gather step " + (slot - world);
        }
        return switch (slot) {
            case 1 -> "mid barrier";
            case 2 -> "end barrier";
            default -> "slot " + slot;
        };
    }

    /** "rank 3 did not arrive within 2000 ms (rank 0 waited at the TwoStage mid barrier, block 5, call 17)". */
    public String message() {
        return "rank " + peer + " did not arrive within " + (timeoutNanos / 1_000_000) + " ms (rank " + rank
                + " waited at the " + algorithm + " " + stage() + ", block " + block + ", call " + epoch + ")";
    }
}
