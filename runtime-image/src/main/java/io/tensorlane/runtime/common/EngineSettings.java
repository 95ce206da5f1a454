package io.tensorlane.runtime.common;

import java.util.Map;

/**
 * What the engine's commands ({@code generate}, {@code bench-model}, {@code serve}) share besides their options: the KV
 * block size and whole numbers from the environment ({@link io.tensorlane.contract.EngineEnv}).
 */
public final class EngineSettings {
    /** Tokens per KV block. */
    public static final int BLOCK_SIZE = 16;

    private EngineSettings() {}

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
