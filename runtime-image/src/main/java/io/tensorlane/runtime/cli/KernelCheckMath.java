package io.tensorlane.runtime.cli;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.HostTensors;
import io.tensorlane.runtime.llm.ModelReference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

/** {@code kernelcheck}'s host side: the comparison rule and host-data conversions (pure, unit-tested on a CPU). */
final class KernelCheckMath {
    private KernelCheckMath() {}

    /** Errors of one comparison. */
    record Stat(double maxAbs, double maxRel, long bad) {
        boolean pass() {
            return bad == 0;
        }
    }

    /**
     * Element-wise check: passes when every output (and reference) is finite and {@code |out - ref| <= u*|ref|*(1+1e-4) + kappa*magnitude + s}
     * (s: half the fp16 subnormal spacing when u is fp16's, else 0). u = kappa = 0 demands exact equality.
     * maxRel is |out - ref| / max(|ref|, 1e-3 * magnitude).
     */
    static Stat compare(double[] got, double[] ref, double u, double kappa, double magnitude) {
        if (got.length != ref.length) {
            throw new IllegalArgumentException("length mismatch: " + got.length + " vs " + ref.length);
        }
        double slack = u == HostTensors.unitRoundoff(DType.fp16) ? 0x1p-25 : 0;
        double floor = Math.max(1e-3 * magnitude, Double.MIN_NORMAL);
        double maxAbs = 0;
        double maxRel = 0;
        long bad = 0;
        for (int i = 0; i < got.length; i++) {
            boolean finite = Double.isFinite(got[i]) && Double.isFinite(ref[i]);
            double d = finite ? Math.abs(got[i] - ref[i]) : Double.POSITIVE_INFINITY;
            maxAbs = Math.max(maxAbs, d);
            maxRel = Math.max(maxRel, d / Math.max(Math.abs(ref[i]), floor));
            if (!finite || !(d <= u * Math.abs(ref[i]) * (1 + 1e-4) + kappa * magnitude + slack)) {
                bad++;
            }
        }
        return new Stat(maxAbs, maxRel, bad);
    }

    /**
     * {@link #compare} of a linear's output {@code got[n, out]} with {@code x[n, in] · w[out, in]ᵀ} in double, the
     * magnitude being the largest {@code |x| · |w|ᵀ} (the products' absolute sum a rounding error scales with).
     */
    static Stat compareLinear(double[] got, double[] x, double[] w, int n, int in, int out, double u, double kappa) {
        double[] ref = ModelReference.linear(x, w, n, in, out);
        double[] abs = ModelReference.linear(
                Arrays.stream(x).map(Math::abs).toArray(),
                Arrays.stream(w).map(Math::abs).toArray(),
                n,
                in,
                out);
        return compare(got, ref, u, kappa, maxAbs(abs));
    }

    static double maxAbs(double[] x) {
        double m = 0;
        for (double v : x) {
            m = Math.max(m, Math.abs(v));
        }
        return m;
    }

    static byte[] encode(DType t, double[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * t.bytes()).order(ByteOrder.LITTLE_ENDIAN);
        for (double d : v) {
            switch (t) {
                case fp32 -> b.putFloat((float) d);
                case bf16 -> b.putShort(HostTensors.floatToBf16((float) d));
                case fp16 -> b.putShort(HostTensors.floatToHalf((float) d));
            }
        }
        return b.array();
    }

    static byte[] ints(int[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int x : v) {
            b.putInt(x);
        }
        return b.array();
    }

    static int[] toInts(byte[] raw) {
        ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        int[] v = new int[raw.length / 4];
        for (int i = 0; i < v.length; i++) {
            v[i] = b.getInt(i * 4);
        }
        return v;
    }

    static byte[] floats(float[] v) {
        ByteBuffer b = ByteBuffer.allocate(v.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        return b.array();
    }

    static double[] toDouble(float[] v) {
        double[] d = new double[v.length];
        for (int i = 0; i < v.length; i++) {
            d[i] = v[i];
        }
        return d;
    }

    static double[] unbox(List<Double> v) {
        return v.stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Bytes of raw[from, from+len) that are no longer the 0xFF poison. */
    static long poisonBroken(byte[] raw, long from, int len) {
        long n = 0;
        for (int i = 0; i < len; i++) {
            if (raw[(int) from + i] != (byte) 0xFF) {
                n++;
            }
        }
        return n;
    }
}
