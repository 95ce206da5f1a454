package io.tensorlane.runtime.model;

/**
 * The FP8 e4m3 ("e4m3fn") element type of FP8 checkpoints on the host: 1 sign bit, 4 exponent bits (bias 7), 3
 * mantissa bits, no infinities, NaN at exponent and mantissa all ones (0x7F, 0xFF), largest finite value 448,
 * subnormals down to 2^-9. The reference the kernels' dequantization is checked against, and the encoder the tests and
 * checks use to make FP8 weights.
 */
public final class Fp8 {
    /** Largest finite e4m3 value. */
    public static final float MAX = 448f;

    private Fp8() {}

    /** The value of an e4m3 byte (NaN for 0x7F and 0xFF). */
    public static float decode(byte b) {
        int v = b & 0xff;
        int sign = v >> 7;
        int exp = (v >> 3) & 0xf;
        int man = v & 7;
        if (exp == 0xf && man == 7) {
            return Float.NaN;
        }
        float mag = exp == 0 ? man * 0x1p-9f : (1 + man / 8f) * (float) Math.scalb(1.0, exp - 7);
        return sign == 1 ? -mag : mag;
    }

    /**
     * The e4m3 byte nearest to {@code x} (ties to the even mantissa), saturated to +-448 as a float-to-e4m3fn cast with
     * saturation does; NaN gives 0x7F.
     */
    public static byte encode(float x) {
        if (Float.isNaN(x)) {
            return 0x7f;
        }
        int sign = (Float.floatToRawIntBits(x) >>> 31) << 7;
        float a = Math.abs(x);
        if (a >= MAX) {
            return (byte) (sign | 0x7e);
        }
        // candidates: the 127 non-negative finite codes are monotonic in value; pick the nearest, ties to even code
        int lo = 0;
        int hi = 0x7e;
        while (lo < hi) { // first code whose value >= a
            int mid = (lo + hi) >>> 1;
            if (decode((byte) mid) < a) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        int code = lo;
        if (code > 0) {
            float up = decode((byte) code);
            float down = decode((byte) (code - 1));
            float du = up - a;
            float dd = a - down;
            if (dd < du || (dd == du && ((code - 1) & 1) == 0)) {
                code = code - 1;
            }
        }
        return (byte) (sign | code);
    }

    /**
     * The real weight of an FP8 tensor: {@code decode(w[r, c]) * scale(r, c)} in double, with {@code scales} in the
     * layout of {@code type} ({@link WeightType#FP8_BLOCK}: grid [ceil(rows/128), ceil(cols/128)];
     * {@link WeightType#FP8_BLOCK_ROWS}: [rows, ceil(cols/128)]; {@link WeightType#FP8_ROW}: [rows]). The host reference of the kernels' dequantization.
     */
    public static double[] dequantize(byte[] w, float[] scales, WeightType type, int rows, int cols) {
        if (!type.fp8() || w.length != (long) rows * cols || scales.length != type.scaleCount(rows, cols)) {
            throw new IllegalArgumentException("dequantize: " + w.length + " weights, " + scales.length
                    + " scales for a " + type + " [" + rows + ", " + cols + "] tensor");
        }
        int kb = (int) type.scaleCols(cols);
        double[] out = new double[w.length];
        for (int r = 0; r < rows; r++) {
            for (int c = 0; c < cols; c++) {
                float s = type == WeightType.FP8_ROW
                        ? scales[r]
                        : scales[(r / type.rowBlock()) * kb + c / WeightType.BLOCK];
                out[r * cols + c] = (double) decode(w[r * cols + c]) * s;
            }
        }
        return out;
    }
}
