package io.tensorlane.contract;

/**
 * One device allocation the custom allreduce makes on each rank.
 *
 * @param name        stable name used in logs, termination messages and plans
 * @param bytes       size to allocate, already rounded up to {@code alignment}
 * @param alignment   the granule the size is rounded to (and the allocation is aligned to)
 * @param peerVisible whether peers read or write it (P2P / CUDA IPC shared); such buffers are what
 *                    engines usually forget to budget
 */
public record DeviceBuffer(String name, long bytes, long alignment, boolean peerVisible) {
    public DeviceBuffer {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("buffer name must not be blank");
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException(
                    "buffer " + name + ": alignment must be a power of two, got " + alignment);
        }
        if (bytes <= 0 || bytes % alignment != 0) {
            throw new IllegalArgumentException("buffer " + name
                    + ": bytes must be a positive multiple of its alignment " + alignment + ", got " + bytes);
        }
    }
}
