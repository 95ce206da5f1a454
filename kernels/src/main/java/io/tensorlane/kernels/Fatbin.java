package io.tensorlane.kernels;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the table of contents of a CUDA fatbin (the container nvcc -fatbin writes): which SASS (ELF) and PTX
 * entries it holds for which architectures. Used by tests and {@code selftest --dry-run}; the CUDA driver
 * does the real loading.
 */
public final class Fatbin {
    static final int MAGIC = 0xBA55ED50;

    /** One entry: {@code ptx} false means SASS in an ELF cubin. */
    public record Entry(boolean ptx, int arch, long payloadBytes) {
        @Override
        public String toString() {
            return (ptx ? "compute_" : "sm_") + arch;
        }
    }

    private Fatbin() {}

    public static List<Entry> entries(byte[] fatbin) {
        ByteBuffer b = ByteBuffer.wrap(fatbin).order(ByteOrder.LITTLE_ENDIAN);
        if (fatbin.length < 16 || b.getInt(0) != MAGIC) {
            throw new IllegalArgumentException("not a CUDA fatbin (bad magic)");
        }
        int headerSize = Short.toUnsignedInt(b.getShort(6));
        long fatSize = b.getLong(8);
        long end = headerSize + fatSize;
        if (end > fatbin.length) {
            throw new IllegalArgumentException(
                    "truncated fatbin: header says " + end + " bytes, have " + fatbin.length);
        }
        List<Entry> out = new ArrayList<>();
        long pos = headerSize;
        while (pos + 0x30 <= end) {
            int at = (int) pos;
            int kind = Short.toUnsignedInt(b.getShort(at));
            long entryHeader = Integer.toUnsignedLong(b.getInt(at + 4));
            long payload = b.getLong(at + 8);
            int arch = b.getInt(at + 0x1c);
            if (kind != 1 && kind != 2) {
                throw new IllegalArgumentException("unknown fatbin entry kind " + kind + " at offset " + pos);
            }
            out.add(new Entry(kind == 1, arch, payload));
            pos += entryHeader + payload;
        }
        return out;
    }
}
