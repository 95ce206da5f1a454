package io.tensorlane.operator.plan;

import java.util.Locale;

/** Byte quantities for messages: 65536 → "64 KiB", 4509715660 → "4.2 GiB". */
public final class Units {
    public static final long KiB = 1024L;
    public static final long MiB = 1024L * KiB;
    public static final long GiB = 1024L * MiB;

    private Units() {}

    /** Binary units; whole numbers without decimals, otherwise one decimal. */
    public static String bytes(long n) {
        long abs = Math.abs(n);
        if (abs >= GiB) {
            return scaled(n, GiB, "GiB");
        }
        if (abs >= MiB) {
            return scaled(n, MiB, "MiB");
        }
        if (abs >= KiB) {
            return scaled(n, KiB, "KiB");
        }
        return n + " B";
    }

    private static String scaled(long n, long unit, String name) {
        if (n % unit == 0) {
            return (n / unit) + " " + name;
        }
        return String.format(Locale.ROOT, "%.1f %s", (double) n / unit, name);
    }

    /** Two decimals, as a fraction is written in a spec: 0.9 → "0.90". */
    public static String fraction(double f) {
        return String.format(Locale.ROOT, "%.2f", f);
    }
}
