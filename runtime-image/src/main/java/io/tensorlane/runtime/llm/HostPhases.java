package io.tensorlane.runtime.llm;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where a timed step's wall time goes on the host (bench-model): {@link System#nanoTime} marks taken by the caller
 * around the hand-off to the rank threads and by rank 0's thread between its calls. Each phase is the time from the
 * previous mark; the GPU runs the step during "launch" and "stream wait" (the wait is mostly GPU time).
 */
public final class HostPhases {
    /** The phases in step order; {@link Marks} holds one more mark than there are phases (the start). */
    public static final List<String> NAMES = List.of(
            "hand-off to rank 0",
            "upload inputs",
            "launch",
            "enqueue id copy",
            "stream wait",
            "watchdog read",
            "read ids and timing",
            "hand-off back (and the other ranks)");

    private HostPhases() {}

    /** The marks of one step: {@code at[0]} before the hand-off, then one after each phase. */
    public record Marks(long[] at) {
        static Marks start() {
            long[] a = new long[NAMES.size() + 1];
            a[0] = System.nanoTime();
            return new Marks(a);
        }

        /** Records the end of phase {@code i} (0-based, as in {@link #NAMES}). */
        void mark(int i) {
            at[i + 1] = System.nanoTime();
        }

        /** Microseconds per phase; NaN for a phase whose mark is missing (e.g. a rank task that failed). */
        public double[] micros() {
            double[] us = new double[NAMES.size()];
            for (int i = 0; i < us.length; i++) {
                us[i] = at[i + 1] == 0 || at[i] == 0 ? Double.NaN : (at[i + 1] - at[i]) / 1e3;
            }
            return us;
        }
    }

    /** Median microseconds per phase over {@code steps}, in phase order (empty for no steps). */
    public static Map<String, Double> medians(List<Marks> steps) {
        Map<String, Double> m = new LinkedHashMap<>();
        if (steps.isEmpty()) {
            return m;
        }
        for (int i = 0; i < NAMES.size(); i++) {
            int phase = i;
            double[] v = steps.stream()
                    .mapToDouble(s -> s.micros()[phase])
                    .filter(d -> !Double.isNaN(d))
                    .sorted()
                    .toArray();
            m.put(NAMES.get(i), v.length == 0 ? Double.NaN : median(v));
        }
        return m;
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** "hand-off to rank 0 3.1 us, upload inputs 12.0 us, ..." */
    public static String format(Map<String, Double> medians) {
        StringBuilder b = new StringBuilder();
        medians.forEach((k, v) ->
                b.append(b.length() == 0 ? "" : ", ").append(k).append(' ').append(String.format("%.1f us", v)));
        return b.toString();
    }
}
