package io.tensorlane.runtime.engine;

import io.tensorlane.contract.DType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.SplittableRandom;

/** Host-side data for checks: random inputs in a dtype, dtype conversions, the fp64 reference and error norms. */
public final class HostTensors {
    private HostTensors() {}

    /** Random values uniform in [-1, 1), rounded to {@code dtype}, as little-endian bytes. */
    public static byte[] random(DType dtype, long count, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        ByteBuffer b =
                ByteBuffer.allocate(Math.toIntExact(count * dtype.bytes())).order(ByteOrder.LITTLE_ENDIAN);
        for (long i = 0; i < count; i++) {
            float f = (float) (rnd.nextDouble() * 2 - 1);
            switch (dtype) {
                case fp32 -> b.putFloat(f);
                case bf16 -> b.putShort(floatToBf16(f));
                case fp16 -> b.putShort(floatToHalf(f));
            }
        }
        return b.array();
    }

    /** Element {@code i} of {@code raw} as a double. */
    public static double get(byte[] raw, DType dtype, int i) {
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        return switch (dtype) {
            case fp32 -> b.getFloat(i * 4);
            case bf16 -> bf16ToFloat(b.getShort(i * 2));
            case fp16 -> halfToFloat(b.getShort(i * 2));
        };
    }

    public static double[] decode(byte[] raw, DType dtype) {
        double[] out = new double[raw.length / dtype.bytes()];
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < out.length; i++) {
            out[i] = switch (dtype) {
                case fp32 -> b.getFloat(i * 4);
                case bf16 -> bf16ToFloat(b.getShort(i * 2));
                case fp16 -> halfToFloat(b.getShort(i * 2));
            };
        }
        return out;
    }

    /** The exact sum (fp64) of every rank's input. */
    public static double[] reference(List<byte[]> inputs, DType dtype) {
        double[] ref = decode(inputs.get(0), dtype);
        for (int r = 1; r < inputs.size(); r++) {
            double[] x = decode(inputs.get(r), dtype);
            for (int i = 0; i < ref.length; i++) {
                ref[i] += x[i];
            }
        }
        return ref;
    }

    /** ‖out − ref‖ / ‖ref‖; NaN or infinite outputs (e.g. an unwritten poisoned element) give +∞. */
    public static double relativeError(double[] out, double[] ref) {
        if (out.length != ref.length) {
            throw new IllegalArgumentException("length mismatch: " + out.length + " vs " + ref.length);
        }
        double num = 0;
        double den = 0;
        for (int i = 0; i < out.length; i++) {
            if (!Double.isFinite(out[i])) {
                return Double.POSITIVE_INFINITY;
            }
            double d = out[i] - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
        }
        return den == 0 ? Math.sqrt(num) : Math.sqrt(num / den);
    }

    /** Tolerance of ‖out − ref‖ / ‖ref‖ for a sum of up to 8 ranks rounded to {@code dtype}. */
    public static double tolerance(DType dtype) {
        return switch (dtype) {
            case fp32 -> 1e-5;
            case fp16 -> 2e-3;
            case bf16 -> 1e-2;
        };
    }

    /** Unit roundoff of the storage type (half the distance from 1 to the next value). */
    public static double unitRoundoff(DType dtype) {
        return switch (dtype) {
            case fp32 -> 0x1p-24;
            case bf16 -> 0x1p-8;
            case fp16 -> 0x1p-11;
        };
    }

    /**
     * Elements whose error breaks the forward-error bound of the kernels' summation: fp32 accumulation of
     * {@code inputs.size()} terms plus {@code dtypeRoundings} roundings of partial sums to the storage type, each at
     * most one unit roundoff of Σ_r |x_r,i| (OneStage/TwoStage round once; Ring rounds at every hop). Unlike
     * ‖out − ref‖/‖ref‖, this bound holds element by element even when the inputs cancel.
     */
    public static long boundViolations(double[] out, List<byte[]> inputs, DType dtype, int dtypeRoundings) {
        double perAbs = dtypeRoundings * unitRoundoff(dtype) + inputs.size() * 0x1p-24;
        double slack = dtype == DType.fp16 ? 0x1p-25 : 0; // fp16 subnormal spacing
        double[] abs = new double[out.length];
        double[] ref = new double[out.length];
        for (byte[] in : inputs) {
            double[] x = decode(in, dtype);
            for (int i = 0; i < out.length; i++) {
                abs[i] += Math.abs(x[i]);
                ref[i] += x[i];
            }
        }
        long bad = 0;
        for (int i = 0; i < out.length; i++) {
            if (!(Math.abs(out[i] - ref[i]) <= perAbs * abs[i] * 1.0001 + slack)) {
                bad++;
            }
        }
        return bad;
    }

    /** Round-to-nearest-even float → bfloat16 bits. */
    public static short floatToBf16(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) 0x7FC0;
        }
        int rounding = ((bits >>> 16) & 1) + 0x7FFF;
        return (short) ((bits + rounding) >>> 16);
    }

    public static float bf16ToFloat(short h) {
        return Float.intBitsToFloat((h & 0xFFFF) << 16);
    }

    /** Round-to-nearest-even float → IEEE half bits. */
    public static short floatToHalf(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = (bits >>> 16) & 0x8000;
        int val = bits & 0x7FFFFFFF;
        if (val >= 0x7F800000) {
            return (short) (sign | 0x7C00 | (val > 0x7F800000 ? 0x200 : 0));
        }
        if (val >= 0x477FF000) { // >= 65520 rounds to infinity
            return (short) (sign | 0x7C00);
        }
        if (val < 0x38800000) { // below the smallest normal half: subnormal, multiple of 2^-24
            return (short) (sign | (int) Math.rint(Float.intBitsToFloat(val) * 16777216.0));
        }
        int exp = (val >>> 23) - 127 + 15;
        int mant = val & 0x7FFFFF;
        int half = (exp << 10) | (mant >>> 13);
        int rem = mant & 0x1FFF;
        if (rem > 0x1000 || (rem == 0x1000 && (half & 1) == 1)) {
            half++;
        }
        return (short) (sign | half);
    }

    public static float halfToFloat(short h) {
        int s = h & 0x8000;
        int e = (h >>> 10) & 0x1F;
        int m = h & 0x3FF;
        float sign = s != 0 ? -1f : 1f;
        if (e == 0) {
            return sign * m * 0x1p-24f;
        }
        if (e == 31) {
            return m == 0 ? sign * Float.POSITIVE_INFINITY : Float.NaN;
        }
        return Float.intBitsToFloat((s << 16) | ((e - 15 + 127) << 23) | (m << 13));
    }
}
