package io.tensorlane.runtime.llm;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Which of a decoder layer's linears run the single-token GEMV kernel ({@link GemvKernels}) instead of cuBLAS in steps
 * of one token (batch-1 decode). Set by {@value #ENV}: {@code off}, {@code all}, or a comma-separated list of
 * {@code qkv, o, gate_up, down}; unset or blank is {@link #DEFAULT}. The LM head always uses cuBLAS (fp32 out), and
 * {@code --baseline-kernels} turns the kernel off (the benchmark's same-run baseline).
 *
 * @param linears the linears that take the GEMV kernel
 */
public record GemvPolicy(Set<Linear> linears) {
    public static final String ENV = "TENSORLANE_GEMV";

    /** A decoder layer's linears (weight names as the loader stores them). */
    public enum Linear {
        QKV,
        O,
        GATE_UP,
        DOWN;

        String key() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** cuBLAS for every linear. */
    public static final GemvPolicy OFF = new GemvPolicy(EnumSet.noneOf(Linear.class));

    /**
     * What an unset {@value #ENV} means: all four. On the 8B geometry (H200, 2026-12-01) a batch-1 decode step took
     * 4.68 ms of GPU time with all four against 4.88 with none; subsets gained less or lost (qkv alone +85 us, down
     * alone +55 us, o and gate_up -126 us, qkv, o and gate_up -192 us: the effects do not add up).
     */
    public static final GemvPolicy DEFAULT = new GemvPolicy(EnumSet.allOf(Linear.class));

    public GemvPolicy {
        linears = linears.isEmpty() ? EnumSet.noneOf(Linear.class) : EnumSet.copyOf(linears);
    }

    /** Whether this linear runs the GEMV kernel in a step of {@code n} tokens with rows of {@code in} elements. */
    public boolean use(Linear l, int n, int in) {
        return linears.contains(l) && GemvKernels.fits(n, in);
    }

    /** The policy {@value #ENV} names; a value that names nothing known is an error that lists the choices. */
    public static GemvPolicy parse(String value) {
        if (value == null || value.isBlank()) {
            return DEFAULT;
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        if (v.equals("off")) {
            return OFF;
        }
        if (v.equals("all")) {
            return new GemvPolicy(EnumSet.allOf(Linear.class));
        }
        Set<Linear> s = EnumSet.noneOf(Linear.class);
        for (String part : v.split(",", -1)) {
            String p = part.trim();
            Linear l = java.util.Arrays.stream(Linear.values())
                    .filter(x -> x.key().equals(p))
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException(ENV + "='" + value + "': unknown linear '" + p
                            + "'; expected off, all, or a comma-separated list of "
                            + java.util.Arrays.stream(Linear.values())
                                    .map(Linear::key)
                                    .collect(Collectors.joining(", "))));
            s.add(l);
        }
        return new GemvPolicy(s);
    }

    /** The policy of this process's environment. */
    public static GemvPolicy fromEnv() {
        return parse(System.getenv(ENV));
    }

    @Override
    public String toString() {
        return linears.isEmpty() ? "off" : linears.stream().map(Linear::key).collect(Collectors.joining(","));
    }
}
