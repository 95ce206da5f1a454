package io.tensorlane.runtime.loadgen;

import java.util.Arrays;

/** Pure statistics over latency samples (ms). NaN samples are ignored. */
public final class Stats {
    /** Mean, median, 90th and 99th percentile of {@code count} samples; all NaN when there are none. */
    public record Dist(int count, double mean, double median, double p90, double p99) {
        public static final Dist EMPTY = new Dist(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }

    private Stats() {}

    public static Dist of(double[] samples) {
        double[] s =
                Arrays.stream(samples).filter(v -> !Double.isNaN(v)).sorted().toArray();
        if (s.length == 0) {
            return Dist.EMPTY;
        }
        double sum = 0;
        for (double v : s) {
            sum += v;
        }
        return new Dist(s.length, sum / s.length, percentile(s, 50), percentile(s, 90), percentile(s, 99));
    }

    /**
     * The {@code p}-th percentile of ascending {@code sorted} with linear interpolation between closest ranks (numpy's
     * default, as vLLM's benchmark reports): rank p/100·(n−1).
     */
    public static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        if (p < 0 || p > 100) {
            throw new IllegalArgumentException("percentile must be in [0, 100], not " + p);
        }
        double rank = p / 100 * (sorted.length - 1);
        int lo = (int) Math.floor(rank);
        int hi = Math.min(lo + 1, sorted.length - 1);
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
    }
}
