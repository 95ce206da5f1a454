package io.tensorlane.runtime.llm;

import java.util.List;
import java.util.Locale;

/**
 * What a decode step prefetches toward L2 before each layer's attention ({@value #ENV}). The attention of a short
 * step reads a few megabytes of keys and values in latency-bound kernels (rope, key slices, their merge: ~13 us a
 * layer of an 8B model at 512 keys, 2026-12-06 H100), while DRAM has nothing else to do; the o projection after it
 * and the gate/up after that read the layer's weights at DRAM speed. {@code tl_l2_prefetch} issues those weights' first
 * bytes toward L2 just before the attention, so that their GEMVs start from L2. Pure decisions here; the kernel is
 * {@link L2PrefetchKernel}.
 *
 * @param on     whether to prefetch at all
 * @param budget bytes in all a layer (o first, then the gate/up's first rows of both halves); {@link #O_ONLY}: the
 *               whole o weight and nothing after it
 */
public record L2Prefetch(boolean on, long budget) {
    public static final String ENV = "TENSORLANE_L2_PREFETCH";
    static final long O_ONLY = -1;
    static final L2Prefetch OFF = new L2Prefetch(false, 0);
    /** The largest budget accepted: above any GPU's L2 today (an H200 has 60 MiB), so a typo is an error. */
    static final int MAX_MIB = 256;

    /** Bytes at a device address; bytes a multiple of 16 and the address 16-byte aligned (the bulk prefetch's). */
    public record Span(long address, long bytes) {
        static final Span NONE = new Span(0, 0);

        public Span {
            if (bytes < 0 || bytes % 16 != 0 || (bytes > 0 && address % 16 != 0)) {
                throw new IllegalArgumentException("prefetch span of " + bytes + " bytes at 0x"
                        + Long.toHexString(address) + ": needs a multiple of 16 bytes at a 16-byte aligned address");
            }
        }
    }

    /**
     * {@value #ENV}'s value: {@code off} (also unset or blank), {@code on} (the o weight), or a number of MiB (o, then
     * the gate/up rows, that many MiB a layer in all); anything else is an error naming the variable.
     */
    static L2Prefetch parse(String value) {
        if (value == null || value.isBlank()) {
            return OFF;
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("off")) {
            return OFF;
        }
        if (v.equals("on")) {
            return new L2Prefetch(true, O_ONLY);
        }
        try {
            int mib = Integer.parseInt(v);
            if (mib >= 1 && mib <= MAX_MIB) {
                return new L2Prefetch(true, (long) mib << 20);
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw new IllegalArgumentException(
                ENV + "='" + value + "': expected off, on or a number of MiB from 1 to " + MAX_MIB);
    }

    /** The setting of this process's environment. */
    static L2Prefetch fromEnv() {
        return parse(System.getenv(ENV));
    }

    /**
     * One layer's spans: the o weight ({@code oBytes} at {@code o}, cut to the budget), then, from what is left, the
     * same number of rows r from the start of each half of the fused gate/up weight at {@code gateUp} ({@code 2 inter}
     * rows of {@code rowBytes}; 0: none), r ≤ inter. A fused one-token gate/up kernel takes gate row j with up row inter
     * + j (its first pass covers both halves' first rows). Lengths are cut to multiples of 16 bytes; rows whose bytes
     * are not one are left out. Empty when off.
     */
    List<Span> layer(long o, long oBytes, long gateUp, int inter, long rowBytes) {
        if (!on) {
            return List.of();
        }
        Span first = new Span(o, (budget == O_ONLY ? oBytes : Math.min(oBytes, budget)) & ~15L);
        long left = budget - first.bytes();
        if (budget == O_ONLY
                || gateUp == 0
                || inter <= 0
                || rowBytes <= 0
                || rowBytes % 16 != 0
                || left < 2 * rowBytes) {
            return List.of(first);
        }
        long rows = Math.min(inter, left / (2 * rowBytes));
        return List.of(first, new Span(gateUp, rows * rowBytes), new Span(gateUp + inter * rowBytes, rows * rowBytes));
    }

    /**
     * Every layer's spans ({@link #layer}) over the loaded weights: {@code layers.<l>.o}, and the gate/up of the layer's
     * MLP block where it names one ({@link MlpBlock#gateUpKey}).
     */
    List<List<Span>> plan(RankWeights weights, MlpBlocks mlp, int layers) {
        List<List<Span>> out = new java.util.ArrayList<>(layers);
        for (int l = 0; l < layers; l++) {
            RankWeights.Weight o = weights.weight("layers." + l + ".o");
            String key = mlp.layer(l).gateUpKey();
            RankWeights.Weight g = key == null ? null : weights.weight(key);
            out.add(
                    g == null
                            ? layer(o.address(), o.rows() * o.rowBytes(), 0, 0, 0)
                            : layer(
                                    o.address(),
                                    o.rows() * o.rowBytes(),
                                    g.address(),
                                    (int) (g.rows() / 2),
                                    g.rowBytes()));
        }
        return List.copyOf(out);
    }
}
