package io.tensorlane.operator;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URL;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one way tests and benchmarks get a {@link TensorlaneConfig}: the same mapping and {@code @WithDefault}s as the
 * Quarkus application, its application.properties, and the Quarkus duration syntax ("10s", "7d"), built with SmallRye
 * Config outside Quarkus. Overrides are keys as in application.properties; an unknown {@code tensorlane.*} key fails
 * (the mapping validates them), so a misspelt override cannot silently keep the default.
 */
public final class TestConfig {
    private TestConfig() {}

    /** Every default. */
    public static TensorlaneConfig defaults() {
        return ConfigProblems.require(of(Map.of(), Map.of()));
    }

    /** The defaults with {@code key, value, key, value, ...} overridden, e.g. {@code "tensorlane.preflight.deadline", "20s"}. */
    public static TensorlaneConfig with(String... keyValues) {
        if (keyValues.length % 2 != 0) {
            throw new IllegalArgumentException("key/value pairs expected");
        }
        Map<String, String> p = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.put(keyValues[i], keyValues[i + 1]);
        }
        return ConfigProblems.require(of(p, Map.of()));
    }

    /** As {@link #with}, without {@link ConfigProblems}' check (for testing the check). */
    static TensorlaneConfig unchecked(String key, String value) {
        return of(Map.of(key, value), Map.of());
    }

    /**
     * The configuration an operator process with this environment gets: SmallRye's environment source, which maps
     * {@code TENSORLANE_RUNTIME_IMAGE} to {@code tensorlane.runtime-image} exactly as in the Quarkus application.
     */
    public static TensorlaneConfig fromEnvironment(Map<String, String> env) {
        return ConfigProblems.require(of(Map.of(), env));
    }

    private static TensorlaneConfig of(Map<String, String> properties, Map<String, String> env) {
        SmallRyeConfigBuilder b = new SmallRyeConfigBuilder()
                .withMapping(TensorlaneConfig.class)
                .withConverter(Duration.class, 200, new DurationConverter())
                // ordinals as in Quarkus: system properties 400, environment 300, application.properties 250
                .withSources(new PropertiesConfigSource(properties, "test overrides", 400))
                .withSources(new EnvConfigSource(env, 300));
        URL app = TestConfig.class.getClassLoader().getResource("application.properties");
        if (app != null) {
            try {
                b.withSources(new PropertiesConfigSource(app, 250));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        SmallRyeConfig config = b.build();
        return config.getConfigMapping(TensorlaneConfig.class);
    }
}
