package io.tensorlane.runtime.model;

/** Rotary position embedding tables (computed in double, stored as float). */
public final class Rope {
    private Rope() {}

    /**
     * The inverse frequencies, one per rotated pair: {@code theta^(-2i/headDim)} for i in [0, headDim/2), then scaled:
     * linear divides all by the factor; llama3 keeps high frequencies (wavelength below
     * original_max_position_embeddings / high_freq_factor), divides low frequencies (wavelength above
     * original_max_position_embeddings / low_freq_factor) by the factor, and blends the two in between.
     */
    public static double[] invFreq(ModelConfig c) {
        int half = c.headDim() / 2;
        double[] inv = new double[half];
        for (int i = 0; i < half; i++) {
            inv[i] = Math.pow(c.ropeTheta(), -2.0 * i / c.headDim());
        }
        RopeScaling s = c.ropeScaling();
        if (s == null) {
            return inv;
        }
        if (RopeScaling.LINEAR.equals(s.type())) {
            for (int i = 0; i < half; i++) {
                inv[i] /= s.factor();
            }
            return inv;
        }
        // llama3
        double original = s.originalMaxPositionEmbeddings();
        double shortestScaled = original / s.lowFreqFactor(); // wavelengths above this: fully scaled
        double longestKept = original / s.highFreqFactor(); // wavelengths below this: unchanged
        for (int i = 0; i < half; i++) {
            double wavelength = 2 * Math.PI / inv[i];
            if (wavelength < longestKept) {
                continue;
            }
            if (wavelength > shortestScaled) {
                inv[i] /= s.factor();
            } else {
                double smooth = (original / wavelength - s.lowFreqFactor()) / (s.highFreqFactor() - s.lowFreqFactor());
                inv[i] = (1 - smooth) * inv[i] / s.factor() + smooth * inv[i];
            }
        }
        return inv;
    }

    /**
     * {cos, sin} tables, each {@code float[maxPositions * headDim/2]}, element {@code [pos * headDim/2 + i]} being
     * cos/sin of {@code pos * invFreq[i]} (the product and the cos/sin are computed in double).
     */
    public static float[][] cosSin(ModelConfig c, int maxPositions) {
        if (maxPositions <= 0) {
            throw new ModelException("rope table needs maxPositions > 0, got " + maxPositions);
        }
        double[] inv = invFreq(c);
        int half = inv.length;
        if ((long) maxPositions * half > Integer.MAX_VALUE - 8) {
            throw new ModelException(
                    "rope table of " + maxPositions + " positions x " + half + " frequencies is too large");
        }
        float[] cos = new float[maxPositions * half];
        float[] sin = new float[maxPositions * half];
        for (int pos = 0; pos < maxPositions; pos++) {
            int base = pos * half;
            for (int i = 0; i < half; i++) {
                double angle = pos * inv[i];
                cos[base + i] = (float) Math.cos(angle);
                sin[base + i] = (float) Math.sin(angle);
            }
        }
        return new float[][] {cos, sin};
    }
}
