package io.tensorlane.runtime.llm;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a decode step prefetches toward L2 before each layer's attention ({@value #ENV}). The attention of a short
 * step reads a few megabytes of keys and values in latency-bound kernels (rope, key slices, their merge: ~13 us a
 * layer of an 8B model at 512 keys, 2026-12-06 H100), while DRAM has nothing else to do; the o projection after it,
 * the gate/up after that and the next layer's qkv read weights at DRAM speed, the small ones well below it (FP8 qkv and
 * o at ~1.67 TB/s against gate/up's 2.68 on that H100). {@code tl_l2_prefetch} issues those weights' bytes toward L2
 * just before the attention, so that their GEMVs start from L2. The one-warp GEMVs stream their weights with an
 * evict-first hint, which may let prefetched lines outlive the gate/up and down between this attention and the next
 * layer's qkv; whether they do is what the bench tells. Pure decisions here; the kernel is {@link L2PrefetchKernel}.
 *
 * @param parts  what to prefetch, in this order, each as far as the budget still reaches (empty: off)
 * @param budget bytes in all a layer; {@link #UNLIMITED}: every part whole
 */
public record L2Prefetch(List<Part> parts, long budget) {
    public static final String ENV = "TENSORLANE_L2_PREFETCH";
    static final long UNLIMITED = Long.MAX_VALUE;
    static final L2Prefetch OFF = new L2Prefetch(List.of(), 0);
    /** The largest budget accepted: above any GPU's L2 today (an H200 has 60 MiB), so a typo is an error. */
    static final int MAX_MIB = 256;

    /** A weight a layer's prefetch may take. */
    enum Part {
        /** The layer's o projection. */
        O,
        /** The first rows of both halves of the layer's fused gate/up (a MoE layer has none: its experts wait on routing). */
        MLP,
        /** The next layer's qkv projection (the last layer has none). */
        QKV
    }

    public L2Prefetch {
        parts = List.copyOf(parts);
    }

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

    /** Whether anything is prefetched. */
    boolean on() {
        return !parts.isEmpty();
    }

    /**
     * {@value #ENV}'s value: {@code off} (also unset or blank); {@code on} (the o weight); a number of MiB N (o, then
     * the gate/up rows, N MiB a layer in all); or parts joined by '+' from {@code o}, {@code mlp}, {@code qkv}, each at
     * most once, in the order they are taken, with {@code @N} for a budget of N MiB ({@code mlp} needs one), e.g. {@code
     * o+qkv}, {@code o+mlp+qkv@48}. Anything else is an error naming the variable.
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
            return new L2Prefetch(List.of(Part.O), UNLIMITED);
        }
        if (v.chars().allMatch(Character::isDigit)) {
            return new L2Prefetch(List.of(Part.O, Part.MLP), mib(value, v));
        }
        int at = v.indexOf('@');
        long budget = at < 0 ? UNLIMITED : mib(value, v.substring(at + 1));
        List<Part> parts = new ArrayList<>();
        for (String name : (at < 0 ? v : v.substring(0, at)).split("\\+", -1)) {
            Part p = switch (name.trim()) {
                case "o" -> Part.O;
                case "mlp" -> Part.MLP;
                case "qkv" -> Part.QKV;
                default -> throw bad(value, "unknown part '" + name.trim() + "'");
            };
            if (parts.contains(p)) {
                throw bad(value, "part '" + name.trim() + "' twice");
            }
            parts.add(p);
        }
        if (parts.contains(Part.MLP) && budget == UNLIMITED) {
            throw bad(value, "mlp needs a budget (@MiB)");
        }
        return new L2Prefetch(parts, budget);
    }

    private static long mib(String value, String digits) {
        try {
            int mib = Integer.parseInt(digits.trim());
            if (mib >= 1 && mib <= MAX_MIB) {
                return (long) mib << 20;
            }
        } catch (NumberFormatException e) {
            // the message below
        }
        throw bad(value, "a budget is a number of MiB from 1 to " + MAX_MIB);
    }

    private static IllegalArgumentException bad(String value, String why) {
        return new IllegalArgumentException(ENV + "='" + value + "': " + why
                + "; expected off, on, a number of MiB, or parts o, mlp, qkv joined by '+' with an optional @MiB");
    }

    /** The setting of this process's environment. */
    static L2Prefetch fromEnv() {
        return parse(System.getenv(ENV));
    }

    /**
     * A layer's weights as the plan sees them: the o projection, the fused gate/up ({@code gateUp} 0: none; {@code
     * 2 inter} rows of {@code rowBytes}) and the next layer's qkv ({@code nextQkv} bytes 0: none).
     */
    record LayerWeights(Span o, long gateUp, int inter, long rowBytes, Span nextQkv) {}

    /**
     * One layer's spans: the parts in order, each cut to what is left of the budget. {@code o} and {@code qkv} are
     * their weights' first bytes; {@code mlp} the same number of rows r from the start of each gate/up half, r ≤ inter
     * (a fused one-token gate/up kernel takes gate row j with up row inter + j, so its first pass covers both halves'
     * first rows), none where the rows' bytes are not a multiple of 16. Lengths are cut to multiples of 16 bytes;
     * empty spans are left out. Empty when off.
     */
    List<Span> layer(LayerWeights w) {
        List<Span> out = new ArrayList<>();
        long left = budget;
        for (Part p : parts) {
            switch (p) {
                case O, QKV -> {
                    Span whole = p == Part.O ? w.o() : w.nextQkv();
                    Span s = new Span(whole.address(), Math.min(whole.bytes(), left) & ~15L);
                    if (s.bytes() > 0) {
                        out.add(s);
                        left -= s.bytes();
                    }
                }
                case MLP -> {
                    if (w.gateUp() == 0 || w.inter() <= 0 || w.rowBytes() <= 0 || w.rowBytes() % 16 != 0) {
                        continue;
                    }
                    long rows = Math.min(w.inter(), left / (2 * w.rowBytes()));
                    if (rows > 0) {
                        out.add(new Span(w.gateUp(), rows * w.rowBytes()));
                        out.add(new Span(w.gateUp() + w.inter() * w.rowBytes(), rows * w.rowBytes()));
                        left -= 2 * rows * w.rowBytes();
                    }
                }
            }
        }
        return List.copyOf(out);
    }

    /**
     * Every layer's spans ({@link #layer}) over the loaded weights: {@code layers.<l>.o}, the gate/up of the layer's
     * MLP block where it names one ({@link MlpBlock#gateUpKey}), {@code layers.<l+1>.qkv}. Empty when off (nothing
     * looks a layer up then).
     */
    List<List<Span>> plan(RankWeights weights, MlpBlocks mlp, int layers) {
        if (!on()) {
            return List.of();
        }
        List<List<Span>> out = new ArrayList<>(layers);
        for (int l = 0; l < layers; l++) {
            String key = mlp.layer(l).gateUpKey();
            RankWeights.Weight g = key == null ? null : weights.weight(key);
            out.add(layer(new LayerWeights(
                    whole(weights.weight("layers." + l + ".o")),
                    g == null ? 0 : g.address(),
                    g == null ? 0 : (int) (g.rows() / 2),
                    g == null ? 0 : g.rowBytes(),
                    l + 1 < layers ? whole(weights.weight("layers." + (l + 1) + ".qkv")) : Span.NONE)));
        }
        return List.copyOf(out);
    }

    /** A weight's bytes, cut to a multiple of 16. */
    private static Span whole(RankWeights.Weight w) {
        return new Span(w.address(), (w.rows() * w.rowBytes()) & ~15L);
    }
}
