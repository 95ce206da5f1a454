package io.tensorlane.runtime.cli;

import io.tensorlane.contract.Algorithm;

/** Pure bandwidth arithmetic for the bench: what each kernel reads and writes (counted from tl_allreduce.cuh). */
public final class Traffic {
    private Traffic() {}

    /**
     * Bytes one rank's kernel reads plus writes for a message of {@code bytes} per rank over {@code world} ranks.
     * OneStage: reads world×S, writes S. TwoStage: reads S (reduce-scatter) + S (all-gather), writes S/world + S.
     * Ring: reads and writes (3·world − 2)·S/world each.
     */
    public static double kernelBytesPerRank(Algorithm a, int world, long bytes) {
        double s = bytes;
        return switch (a) {
            case OneStage -> world * s + s;
            case TwoStage -> 2 * s + s / world + s;
            case Ring -> 2 * (3.0 * world - 2) * s / world;
            case NCCL -> throw new IllegalArgumentException("NCCL's internal traffic is not modelled");
        };
    }

    /** Algorithm bandwidth (bytes per rank / time), GB/s with {@code micros} per call. */
    public static double algBw(long bytes, double micros) {
        return bytes / (micros * 1e-6) / 1e9;
    }

    /** NCCL's bus bandwidth convention for allreduce: algbw × 2(n−1)/n. */
    public static double busBw(long bytes, double micros, int world) {
        return algBw(bytes, micros) * 2.0 * (world - 1) / world;
    }

    /** All ranks' kernel traffic per second, GB/s (what a virtual-rank run puts on one GPU's memory). */
    public static double kernelGBs(Algorithm a, int world, long bytes, double micros) {
        return world * kernelBytesPerRank(a, world, bytes) / (micros * 1e-6) / 1e9;
    }

    public static double median(double[] xs) {
        if (xs.length == 0) {
            throw new IllegalArgumentException("no samples");
        }
        double[] s = xs.clone();
        java.util.Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }
}
