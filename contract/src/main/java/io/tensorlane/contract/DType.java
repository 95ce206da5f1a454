package io.tensorlane.contract;

/** Element types the allreduce kernels take (accumulation is always fp32). */
public enum DType {
    fp32(4),
    bf16(2),
    fp16(2);

    private final int bytes;

    DType(int bytes) {
        this.bytes = bytes;
    }

    public int bytes() {
        return bytes;
    }

    /** Elements in one 16-byte vector access. */
    public int elementsPerVector() {
        return BufferLayout.VECTOR_BYTES / bytes;
    }

    public static DType parse(String name) {
        for (DType d : values()) {
            if (d.name().equalsIgnoreCase(name)) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown dtype '" + name + "', expected one of fp32, bf16, fp16");
    }
}
