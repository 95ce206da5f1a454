package io.tensorlane.runtime.cli;

/**
 * How far one computation of KV (or logits) is from another, group by group (prefixcheck: a group is one rank's K or V
 * of one layer over one 16-token block, or one position's logits row). The measure of a group is its relative L2
 * distance {@code ||a - b|| / max(||a||, ||b||)}; the verdict compares the worst group with a tolerance. Rounding to
 * bf16 moves an element by at most half its spacing (2^-8 relative), so two computations of the same values that
 * differ only by rounding and summation order stay within a few times 2^-8; a block of other tokens (a shifted table, a
 * stale block) is off by O(1). The largest element difference in bf16 spacings is reported beside it.
 */
final class KvDiff {
    /** bf16 keeps 8 significant bits (7 stored): its spacing at {@code x} is fp32's times 2^16. */
    static double bf16Spacing(float x) {
        float m = Math.abs(x);
        if (!(m >= Float.MIN_NORMAL)) {
            m = Float.MIN_NORMAL;
        }
        return Math.ulp(m) * 65536.0;
    }

    /**
     * The comparison so far: the worst group's relative L2 distance and its name, the largest absolute element difference
     * and the largest in bf16 spacings (of the larger of the two elements), the groups and elements compared, and
     * whether any element was not finite (NaN or infinite in either).
     */
    record Stat(
            double worstRel,
            String worstGroup,
            double maxAbs,
            double maxSpacings,
            int groups,
            long elements,
            boolean nonFinite) {
        /** Whether every group is within {@code tol} (and something was compared, and everything was finite). */
        boolean within(double tol) {
            return groups > 0 && !nonFinite && worstRel <= tol;
        }
    }

    private double worstRel = -1;
    private String worstGroup = "-";
    private double maxAbs;
    private double maxSpacings;
    private int groups;
    private long elements;
    private boolean nonFinite;

    /** Adds group {@code name}: {@code a[aOff, aOff + len)} against {@code b[bOff, bOff + len)}. */
    KvDiff add(String name, float[] a, int aOff, float[] b, int bOff, int len) {
        if (len <= 0) {
            throw new IllegalArgumentException("group " + name + " is empty");
        }
        double d2 = 0;
        double a2 = 0;
        double b2 = 0;
        for (int i = 0; i < len; i++) {
            float x = a[aOff + i];
            float y = b[bOff + i];
            if (!Float.isFinite(x) || !Float.isFinite(y)) {
                nonFinite = true;
                continue;
            }
            double d = (double) x - y;
            d2 += d * d;
            a2 += (double) x * x;
            b2 += (double) y * y;
            double ad = Math.abs(d);
            maxAbs = Math.max(maxAbs, ad);
            maxSpacings = Math.max(maxSpacings, ad / bf16Spacing(Math.max(Math.abs(x), Math.abs(y))));
        }
        double norm = Math.sqrt(Math.max(a2, b2));
        double rel = d2 == 0 ? 0 : Math.sqrt(d2) / norm;
        if (rel > worstRel) {
            worstRel = rel;
            worstGroup = name;
        }
        groups++;
        elements += len;
        return this;
    }

    Stat stat() {
        return new Stat(Math.max(0, worstRel), worstGroup, maxAbs, maxSpacings, groups, elements, nonFinite);
    }
}
