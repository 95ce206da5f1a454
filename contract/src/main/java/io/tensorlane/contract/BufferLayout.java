package io.tensorlane.contract;

import java.util.List;

/**
 * The one description of every device buffer a rank allocates for the custom allreduce. The engine allocates
 * exactly {@link #buffers()} in that order; the operator's memory planner budgets
 * {@link #totalBytesPerRank()}. The byte layouts inside the buffers mirror {@code tl_allreduce.cuh}
 * (constants marked "mirrors" below must change together with the header).
 *
 * <ul>
 *   <li>{@code signal} (peer-visible): {@code uint32 flags[blocks][FLAG_SLOTS][MAX_RANKS]}; peer {@code p} writes
 *       only {@code flags[b][slot][p]} of our buffer, so no peer atomics are needed.</li>
 *   <li>{@code staging} (peer-visible): eager inputs are copied here so peers can read them.</li>
 *   <li>{@code scratch} (peer-visible): 2-stage reduce-scatter results; Ring's receive slots.</li>
 *   <li>{@code push} (peer-visible): OneStage's push variant ({@code tl_push.cuh}): {@value #PUSH_PHASES} phases of
 *       one region per writing rank, {@link #pushSlotBytes()} each; peers store their inputs into it.</li>
 *   <li>{@code state} (local): per-block epoch counters, the watchdog's error record, then the push variant's call
 *       counter and finished-block count.</li>
 *   <li>{@code rank-data} (local): peer pointer tables; slots 0..3 hold staging/scratch/signal/push, the rest
 *       registered (CUDA-graph) input buffers.</li>
 * </ul>
 *
 * @param worldSize        ranks taking part, 1..{@value #MAX_RANKS}
 * @param maxMessageBytes  the largest message (bytes per rank) the custom allreduce accepts; rounded up to
 *                         {@value #VECTOR_BYTES} bytes by {@link #of}
 * @param blocks           the most thread blocks one rank's kernel launches, 1..{@value #MAX_BLOCKS}
 * @param graphBufferSlots how many input buffers may be registered (for CUDA-graph capture), 0..{@value #MAX_GRAPH_SLOTS}
 */
public record BufferLayout(int worldSize, long maxMessageBytes, int blocks, int graphBufferSlots) {
    /** Mirrors TL_MAX_RANKS. */
    public static final int MAX_RANKS = 8;
    /** Mirrors TL_FLAG_SLOTS: start, mid, end barriers and up to 2*(MAX_RANKS-1) ring steps. */
    public static final int FLAG_SLOTS = 16;
    /** Mirrors TL_THREADS: threads per block of every allreduce kernel. */
    public static final int THREADS_PER_BLOCK = 512;
    /** Mirrors TL_ERROR_RECORD_BYTES: the watchdog's error record at the end of {@code state}. */
    public static final int ERROR_RECORD_BYTES = 64;
    /** Mirrors TL_FIXED_SLOTS: rank-data slots 0..3 are staging, scratch, signal, push. */
    public static final int FIXED_POINTER_SLOTS = 4;
    /** Mirrors TL_PUSH_SLOT: the rank-data slot of every rank's push buffer. */
    public static final int PUSH_POINTER_SLOT = 3;
    /** Mirrors TL_PUSH_PHASES: calls alternate between two regions per writer in the push buffer. */
    public static final int PUSH_PHASES = 2;
    /** The largest message OneStage's push variant takes (bytes per rank); larger ones pull. */
    public static final long PUSH_MAX_MESSAGE_BYTES = 256L * 1024;
    /**
     * Mirrors TL_PUSH_EMPTY_ELEMENT: the push buffer's "not arrived" 16-bit element (-0.0 in bf16 and fp16; senders
     * send +0.0 instead). The engine fills the buffer with it; readers put it back into what they took.
     */
    public static final int PUSH_EMPTY_ELEMENT = 0x8000;
    /** Mirrors TL_WAIT_PUSH: the watchdog record's slot for "waited for a peer's pushed data" (not a flag slot). */
    public static final int PUSH_WAIT_SLOT = 16;
    /** The push variant's two words in {@code state}: call counter, finished blocks. */
    public static final int PUSH_STATE_BYTES = 8;
    /** Every access is a 16-byte vector. */
    public static final int VECTOR_BYTES = 16;

    public static final int MAX_BLOCKS = 1024;
    public static final int MAX_GRAPH_SLOTS = 1 << 20;
    /** CUDA hands out (and CUDA IPC maps) device memory in 2 MiB granules: a peer-visible buffer costs whole granules. */
    public static final long PEER_GRANULE = 2L * 1024 * 1024;
    /** Alignment of local (not exported) buffers. */
    public static final long LOCAL_ALIGNMENT = 256;
    /** Largest message accepted at all (matches the API's maximum of 1 GiB). */
    public static final long MAX_MESSAGE_BYTES = 1L << 30;

    public static final int DEFAULT_BLOCKS = 64;
    public static final int DEFAULT_GRAPH_SLOTS = 8192;

    public BufferLayout {
        if (worldSize < 1 || worldSize > MAX_RANKS) {
            throw new IllegalArgumentException("worldSize must be 1.." + MAX_RANKS + ", got " + worldSize);
        }
        if (maxMessageBytes <= 0) {
            throw new IllegalArgumentException("maxMessageBytes must be > 0, got " + maxMessageBytes);
        }
        if (maxMessageBytes % VECTOR_BYTES != 0) {
            throw new IllegalArgumentException("maxMessageBytes must be a multiple of " + VECTOR_BYTES
                    + " (use BufferLayout.of to round up), got " + maxMessageBytes);
        }
        if (maxMessageBytes > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException(
                    "maxMessageBytes must be <= " + MAX_MESSAGE_BYTES + ", got " + maxMessageBytes);
        }
        if (blocks < 1 || blocks > MAX_BLOCKS) {
            throw new IllegalArgumentException("blocks must be 1.." + MAX_BLOCKS + ", got " + blocks);
        }
        if (graphBufferSlots < 0 || graphBufferSlots > MAX_GRAPH_SLOTS) {
            throw new IllegalArgumentException(
                    "graphBufferSlots must be 0.." + MAX_GRAPH_SLOTS + ", got " + graphBufferSlots);
        }
    }

    /** Layout with {@link #DEFAULT_BLOCKS} and {@link #DEFAULT_GRAPH_SLOTS}; rounds the message size up to 16 bytes. */
    public static BufferLayout of(int worldSize, long maxMessageBytes) {
        return of(worldSize, maxMessageBytes, DEFAULT_BLOCKS, DEFAULT_GRAPH_SLOTS);
    }

    /** Layout with explicit block count and graph slots; rounds the message size up to 16 bytes. */
    public static BufferLayout of(int worldSize, long maxMessageBytes, int blocks, int graphBufferSlots) {
        if (maxMessageBytes <= 0) {
            throw new IllegalArgumentException("maxMessageBytes must be > 0, got " + maxMessageBytes);
        }
        if (maxMessageBytes > MAX_MESSAGE_BYTES) {
            throw new IllegalArgumentException(
                    "maxMessageBytes must be <= " + MAX_MESSAGE_BYTES + ", got " + maxMessageBytes);
        }
        return new BufferLayout(worldSize, alignUp(maxMessageBytes, VECTOR_BYTES), blocks, graphBufferSlots);
    }

    /** Bytes of the flag array in {@code signal}. */
    public long signalFlagBytes() {
        return (long) blocks * FLAG_SLOTS * MAX_RANKS * Integer.BYTES;
    }

    /** Byte offset of the error record inside {@code state} (after the per-block counters, 64-byte aligned). */
    public long errorRecordOffset() {
        return alignUp((long) blocks * Integer.BYTES, 64);
    }

    /** Byte offset of the push variant's call counter inside {@code state} (right after the error record). */
    public long pushStateOffset() {
        return errorRecordOffset() + ERROR_RECORD_BYTES;
    }

    /** Bytes of one (phase, writer) region of the push buffer: the largest message the push variant takes. */
    public long pushSlotBytes() {
        return Math.min(maxMessageBytes, PUSH_MAX_MESSAGE_BYTES);
    }

    /** Number of pointer-table slots in {@code rank-data}. */
    public int pointerSlots() {
        return FIXED_POINTER_SLOTS + graphBufferSlots;
    }

    /** Bytes of one pointer-table slot: one 64-bit pointer per possible rank. */
    public static long pointerSlotBytes() {
        return (long) MAX_RANKS * Long.BYTES;
    }

    /** Every device buffer one rank allocates, in allocation order. */
    public List<DeviceBuffer> buffers() {
        return List.of(
                new DeviceBuffer("signal", alignUp(signalFlagBytes(), PEER_GRANULE), PEER_GRANULE, true),
                new DeviceBuffer("staging", alignUp(maxMessageBytes, PEER_GRANULE), PEER_GRANULE, true),
                new DeviceBuffer("scratch", alignUp(maxMessageBytes, PEER_GRANULE), PEER_GRANULE, true),
                new DeviceBuffer(
                        "push",
                        alignUp((long) PUSH_PHASES * worldSize * pushSlotBytes(), PEER_GRANULE),
                        PEER_GRANULE,
                        true),
                new DeviceBuffer(
                        "state",
                        alignUp(pushStateOffset() + PUSH_STATE_BYTES, LOCAL_ALIGNMENT),
                        LOCAL_ALIGNMENT,
                        false),
                new DeviceBuffer(
                        "rank-data",
                        alignUp(pointerSlots() * pointerSlotBytes(), LOCAL_ALIGNMENT),
                        LOCAL_ALIGNMENT,
                        false));
    }

    /** The buffer called {@code name}. */
    public DeviceBuffer buffer(String name) {
        return buffers().stream()
                .filter(b -> b.name().equals(name))
                .findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no buffer named " + name));
    }

    /** Bytes of the IPC-shared (peer-visible) buffers one rank allocates. */
    public long ipcBytesPerRank() {
        return buffers().stream()
                .filter(DeviceBuffer::peerVisible)
                .mapToLong(DeviceBuffer::bytes)
                .sum();
    }

    /** All device bytes one rank allocates for the custom allreduce (each buffer rounded to its alignment). */
    public long totalBytesPerRank() {
        return buffers().stream().mapToLong(DeviceBuffer::bytes).sum();
    }

    static long alignUp(long value, long alignment) {
        return Math.addExact(value, alignment - 1) / alignment * alignment;
    }
}
