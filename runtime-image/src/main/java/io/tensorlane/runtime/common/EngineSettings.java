package io.tensorlane.runtime.common;

import java.util.Map;

/**
 * What the engine's commands ({@code generate}, {@code bench-model}, {@code serve}) share besides their options: the KV
 * block size and whole numbers from the environment ({@link io.tensorlane.contract.EngineEnv}).
 */
public final class EngineSettings {
    /** Tokens per KV block. */
    public static final int BLOCK_SIZE = 16;
    /**
     * {@code serve}'s automatic prefix caching: {@code true} (the default) or {@code false} ({@code --no-prefix-caching}
     * wins). Not part of the operator's plan: set it through the deployment's extra environment.
     */
    public static final String PREFIX_CACHING = "TENSORLANE_PREFIX_CACHING";
    /**
     * {@code serve}'s debug switch: {@code true} audits the KV block allocator against the sequences' block tables after
     * every step and stops serving at the first inconsistency ({@code --kv-audit} wins); {@code false} by default.
     */
    public static final String KV_AUDIT = "TENSORLANE_KV_AUDIT";

    private EngineSettings() {}

    /** {@code true} or {@code false} (any case) from {@code env}, or {@code dflt} when unset; else names the variable. */
    public static boolean envBoolean(Map<String, String> env, String name, boolean dflt) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true":
                return true;
            case "false":
                return false;
            default:
                throw new IllegalArgumentException(name + " must be true or false, got '" + v + "'");
        }
    }

    /** A whole number from {@code env}, or {@code dflt} when unset; a bad value names the variable. */
    public static long envLong(Map<String, String> env, String name, long dflt) {
        String v = env.get(name);
        if (v == null || v.isBlank()) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a whole number, got '" + v + "'");
        }
    }
}
