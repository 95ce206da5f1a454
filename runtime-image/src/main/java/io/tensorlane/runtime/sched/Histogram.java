package io.tensorlane.runtime.sched;

import java.util.Arrays;

/** A fixed-bucket histogram (Prometheus semantics: a value lands in the first bucket whose bound is >= it). Thread-safe. */
final class Histogram {
    record Snapshot(double[] bounds, long[] counts, long count, double sum) {}

    private final double[] bounds;
    private final long[] counts;
    private long count;
    private double sum;

    Histogram(double... bounds) {
        for (int i = 1; i < bounds.length; i++) {
            if (!(bounds[i] > bounds[i - 1])) {
                throw new IllegalArgumentException("bucket bounds must increase: " + Arrays.toString(bounds));
            }
        }
        this.bounds = bounds.clone();
        this.counts = new long[bounds.length + 1];
    }

    synchronized void observe(double v) {
        int i = Arrays.binarySearch(bounds, v);
        counts[i >= 0 ? i : -i - 1]++;
        count++;
        sum += v;
    }

    synchronized Snapshot snapshot() {
        return new Snapshot(bounds, counts.clone(), count, sum);
    }
}
