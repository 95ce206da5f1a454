package io.tensorlane.runtime.cli;

import java.util.Arrays;

/**
 * Pure: summary statistics of timing samples (bench-model). Percentiles interpolate linearly between the closest ranks
 * (numpy's default): the p-th percentile of sorted {@code x[0..n-1]} is at fractional index {@code p/100 * (n-1)}.
 */
public record ModelBenchStats(int n, double min, double p10, double median, double p90, double max, double mean) {

    /** The statistics of {@code samples} (at least one, all finite). */
    public static ModelBenchStats of(double[] samples) {
        if (samples == null || samples.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        double[] x = samples.clone();
        double sum = 0;
        for (double v : x) {
            if (!Double.isFinite(v)) {
                throw new IllegalArgumentException("sample " + v + " is not finite");
            }
            sum += v;
        }
        Arrays.sort(x);
        return new ModelBenchStats(
                x.length,
                x[0],
                sortedPercentile(x, 10),
                sortedPercentile(x, 50),
                sortedPercentile(x, 90),
                x[x.length - 1],
                sum / x.length);
    }

    /** The {@code p}-th percentile (0..100) of {@code samples}. */
    public static double percentile(double[] samples, double p) {
        if (samples == null || samples.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        double[] x = samples.clone();
        Arrays.sort(x);
        return sortedPercentile(x, p);
    }

    static double sortedPercentile(double[] sorted, double p) {
        if (!(p >= 0 && p <= 100)) {
            throw new IllegalArgumentException("percentile must be in [0, 100], got " + p);
        }
        double idx = p / 100 * (sorted.length - 1);
        int lo = (int) Math.floor(idx);
        int hi = Math.min(lo + 1, sorted.length - 1);
        double f = idx - lo;
        return sorted[lo] + (sorted[hi] - sorted[lo]) * f;
    }
}
