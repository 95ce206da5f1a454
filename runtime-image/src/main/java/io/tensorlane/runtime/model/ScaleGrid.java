package io.tensorlane.runtime.model;

import java.nio.ByteBuffer;

/**
 * The fp32 scale grid of one FP8 device tensor ({@link WeightType#scaleRows} x {@link WeightType#scaleCols}, row-major),
 * assembled on the host from its {@link ScalePiece}s: the checkpoint's scale tensors are small (1/16384 of a
 * block-scaled weight's elements, one float per row otherwise), so they are read whole, converted from F32, BF16 or
 * F16 and placed; the grid is then uploaded beside the weight. A scale that is not finite or is negative ends with a
 * message naming the tensor (a zero scale is a block of zeros and is kept).
 */
public final class ScaleGrid {
    private ScaleGrid() {}

    public static float[] build(Checkpoint ck, DeviceTensor t) {
        long n = t.scaleCount();
        if (n > Integer.MAX_VALUE) {
            throw new ModelException(t.key() + ": " + n + " scales do not fit one host array");
        }
        float[] grid = new float[(int) n];
        long cols = t.type().scaleCols(t.cols());
        for (ScalePiece s : t.scales()) {
            TensorInfo src = ck.require(s.source());
            float[] v = read(ck, src);
            long srcRows = v.length / s.sourceCols();
            if (v.length % s.sourceCols() != 0
                    || (!s.broadcast() && s.sourceRow(s.rows() - 1) >= srcRows)
                    || (s.broadcast() && v.length != 1)) {
                throw new ModelException("scale tensor " + src + " does not hold the window " + s + " needs");
            }
            for (long r = 0; r < s.rows(); r++) {
                for (long c = 0; c < s.cols(); c++) {
                    float x = s.broadcast() ? v[0] : v[(int) (s.sourceRow(r) * s.sourceCols() + s.srcColStart() + c)];
                    if (!(x >= 0) || Float.isInfinite(x)) {
                        throw new ModelException("scale tensor " + s.source() + " holds " + x
                                + " (scales must be finite and not negative)");
                    }
                    grid[(int) ((s.dstRowStart() + r) * cols + c)] = x;
                }
            }
        }
        return grid;
    }

    /**
     * A row-major grid of {@code cols} columns with each row padded by zeros to a multiple of {@code multiple} columns
     * (the row stride cuBLASLt's 128x128 block scales need: 16 bytes); the grid itself when it already is one.
     */
    public static float[] padRows(float[] grid, int cols, int multiple) {
        if (cols <= 0 || multiple <= 0 || grid.length % cols != 0) {
            throw new IllegalArgumentException(
                    "a grid of " + grid.length + " scales in rows of " + cols + ", padded to " + multiple);
        }
        int ld = (cols + multiple - 1) / multiple * multiple;
        if (ld == cols) {
            return grid;
        }
        int rows = grid.length / cols;
        float[] out = new float[rows * ld];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(grid, r * cols, out, r * ld, cols);
        }
        return out;
    }

    /** Groups of {@code group} columns in {@code cols} (the last one partial). */
    public static int groups(long cols, int group) {
        return (int) ((cols + group - 1) / group);
    }

    /**
     * Per-row scales {@code [rows]} as a {@code [groups, rows]} grid (row-contiguous), each row's scale repeated for
     * each of its column groups: per-channel weights in cuBLASLt's 1x128 (VEC128_32F) layout.
     */
    public static float[] rowsPerGroup(float[] perRow, int groups) {
        if (groups <= 0) {
            throw new IllegalArgumentException("groups must be positive, got " + groups);
        }
        float[] out = new float[perRow.length * groups];
        for (int g = 0; g < groups; g++) {
            System.arraycopy(perRow, 0, out, g * perRow.length, perRow.length);
        }
        return out;
    }

    /** Every element of a scale tensor as fp32. */
    static float[] read(Checkpoint ck, TensorInfo t) {
        long n = t.elements();
        if (!Fp8Shards.SCALE_DTYPES.contains(t.dtype()) || n * t.dtype().bytes() != t.byteLength()) {
            throw new ModelException("scale tensor " + t + " is not F32, BF16 or F16");
        }
        ByteBuffer b = ck.map(t);
        float[] out = new float[Math.toIntExact(n)];
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (t.dtype()) {
                case F32 -> b.getFloat(4 * i);
                case BF16 -> Float.intBitsToFloat((b.getShort(2 * i) & 0xffff) << 16);
                default -> halfToFloat(b.getShort(2 * i));
            };
        }
        return out;
    }

    /** IEEE binary16 to float (exact). */
    static float halfToFloat(short h) {
        int sign = (h >> 15) & 1;
        int exp = (h >> 10) & 0x1f;
        int man = h & 0x3ff;
        float mag;
        if (exp == 0x1f) {
            mag = man == 0 ? Float.POSITIVE_INFINITY : Float.NaN;
        } else if (exp == 0) {
            mag = man * 0x1p-24f;
        } else {
            mag = (1 + man / 1024f) * (float) Math.scalb(1.0, exp - 15);
        }
        return sign == 1 ? -mag : mag;
    }
}
