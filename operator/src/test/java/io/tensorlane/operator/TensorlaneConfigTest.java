package io.tensorlane.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.testkit.RepoRoot;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The one configuration: its defaults, Quarkus' environment mapping, and that nothing else holds configuration. */
class TensorlaneConfigTest {
    static Arguments key(
            String env, String value, Function<TensorlaneConfig, Object> read, Object expected, Object byDefault) {
        return Arguments.of(env, value, read, expected, byDefault);
    }

    /** Every key: the environment variable that sets it, a value, what the operator reads then, and by default. */
    static Stream<Arguments> keys() {
        return Stream.of(
                key(
                        "TENSORLANE_RUNTIME_IMAGE",
                        "reg.example/tl/runtime:9",
                        TensorlaneConfig::runtimeImage,
                        "reg.example/tl/runtime:9",
                        "tensorlane/tensorlane-runtime:0.1.0"),
                key(
                        "TENSORLANE_TOPOLOGY_MAX_AGE",
                        "3d",
                        TensorlaneConfig::topologyMaxAge,
                        Duration.ofDays(3),
                        Duration.ofDays(7)),
                key(
                        "TENSORLANE_HEURISTIC_GRACE",
                        "45s",
                        TensorlaneConfig::heuristicGrace,
                        Duration.ofSeconds(45),
                        Duration.ofMinutes(2)),
                key(
                        "TENSORLANE_REQUEUE_WHILE_ROLLING_OUT",
                        "2s",
                        TensorlaneConfig::requeueWhileRollingOut,
                        Duration.ofSeconds(2),
                        Duration.ofSeconds(10)),
                key(
                        "TENSORLANE_ROLLBACK_BACKOFF",
                        "1m",
                        TensorlaneConfig::rollbackBackoff,
                        Duration.ofMinutes(1),
                        Duration.ofSeconds(10)),
                key(
                        "TENSORLANE_MEASUREMENT_MAX_AGE",
                        "1d",
                        TensorlaneConfig::measurementMaxAge,
                        Duration.ofDays(1),
                        Duration.ofDays(7)),
                key("TENSORLANE_POD_RUN_AS_USER", "2000", c -> c.pod().runAsUser(), 2000L, 1000L),
                key("TENSORLANE_POD_SHM_SIZE_LIMIT", "32Gi", c -> c.pod().shmSizeLimit(), "32Gi", "16Gi"),
                key("TENSORLANE_PREFLIGHT_ENABLED", "false", c -> c.preflight().enabled(), false, true),
                key(
                        "TENSORLANE_PREFLIGHT_DEADLINE",
                        "20s",
                        c -> c.preflight().deadline(),
                        Duration.ofSeconds(20),
                        Duration.ofMinutes(5)),
                key(
                        "TENSORLANE_PREFLIGHT_GRACE",
                        "5s",
                        c -> c.preflight().grace(),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(30)),
                key(
                        "TENSORLANE_PREFLIGHT_TTL",
                        "2h",
                        c -> c.preflight().ttl(),
                        Duration.ofHours(2),
                        Duration.ofHours(1)),
                key(
                        "TENSORLANE_PREFLIGHT_RECHECK",
                        "1s",
                        c -> c.preflight().recheck(),
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(5)),
                key(
                        "TENSORLANE_PREFLIGHT_BENCH_MAX_BYTES",
                        "1048576",
                        c -> c.preflight().benchMaxBytes(),
                        1048576L,
                        8388608L),
                key(
                        "TENSORLANE_MODEL_HUB_ENDPOINT",
                        "http://127.0.0.1:8123",
                        c -> c.model().hubEndpoint(),
                        "http://127.0.0.1:8123",
                        "https://huggingface.co"),
                key(
                        "TENSORLANE_MODEL_REQUEST_TIMEOUT",
                        "3s",
                        c -> c.model().requestTimeout(),
                        Duration.ofSeconds(3),
                        Duration.ofSeconds(10)),
                key(
                        "TENSORLANE_MODEL_BRANCH_TTL",
                        "1m",
                        c -> c.model().branchTtl(),
                        Duration.ofMinutes(1),
                        Duration.ofMinutes(10)),
                key(
                        "TENSORLANE_MODEL_FAILURE_TTL",
                        "5s",
                        c -> c.model().failureTtl(),
                        Duration.ofSeconds(5),
                        Duration.ofSeconds(30)),
                key("TENSORLANE_MODEL_THREADS", "8", c -> c.model().threads(), 8, 4));
    }

    @ParameterizedTest(name = "{0}={1}")
    @MethodSource("keys")
    void everyKeyHasOneDefaultAndIsSetByItsEnvironmentVariable(
            String env, String value, Function<TensorlaneConfig, Object> read, Object expected, Object byDefault) {
        assertThat(read.apply(TestConfig.defaults())).isEqualTo(byDefault);
        assertThat(read.apply(TestConfig.fromEnvironment(Map.of(env, value)))).isEqualTo(expected);
        // the property spelling of the same key (application.properties, -D)
        String property = env.toLowerCase().replaceFirst("^tensorlane_", "tensorlane.");
        for (String group : List.of("pod", "preflight", "model")) {
            property = property.replaceFirst("^tensorlane\\." + group + "_", "tensorlane." + group + ".");
        }
        assertThat(read.apply(TestConfig.with(property.replace('_', '-'), value)))
                .isEqualTo(expected);
    }

    @Test
    void theTableCoversEveryKeyOfTheMapping() {
        long methods = Stream.of(
                        TensorlaneConfig.class,
                        TensorlaneConfig.Pod.class,
                        TensorlaneConfig.Preflight.class,
                        TensorlaneConfig.Model.class)
                .flatMap(c -> Stream.of(c.getDeclaredMethods()))
                .filter(m -> !java.lang.reflect.Modifier.isStatic(m.getModifiers())
                        && m.getParameterCount() == 0
                        && !m.getReturnType().isInterface())
                .count();
        assertThat(keys()).hasSize((int) methods);
    }

    @Test
    void environmentOfOtherToolsIsIgnoredAndAMisspeltPropertyFails() {
        // hack/demo.sh exports these into the operator's environment
        assertThat(TestConfig.fromEnvironment(Map.of("TENSORLANE_STATE_DIR", "/tmp/x", "TENSORLANE_REPO", "/work"))
                        .runtimeImage())
                .isEqualTo(TestConfig.defaults().runtimeImage());
        assertThatThrownBy(() -> TestConfig.with("tensorlane.runtime-imag", "x:1"))
                .hasMessageContaining("runtime-imag");
    }

    @Test
    void applicationPropertiesRepeatsNoDefault() throws IOException {
        Properties props = new Properties();
        try (InputStream in =
                Files.newInputStream(operatorDir().resolve("src/main/resources/application.properties"))) {
            props.load(in);
        }
        assertThat(props.stringPropertyNames()).noneMatch(k -> k.startsWith("tensorlane."));
    }

    /** Nothing but TensorlaneConfig reads configuration: no @ConfigProperty, no other mapping, no getenv. */
    @Test
    void noOtherCodeReadsConfiguration() throws IOException {
        Path main = operatorDir().resolve("src/main/java");
        try (Stream<Path> files = Files.walk(main)) {
            List<String> offenders = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !p.endsWith("io/tensorlane/operator/TensorlaneConfig.java"))
                    .filter(p -> {
                        String s = read(p);
                        return s.contains("@ConfigProperty")
                                || s.contains("@ConfigMapping")
                                || s.contains("System.getenv(")
                                || s.contains("ConfigProvider.getConfig(");
                    })
                    .map(p -> main.relativize(p).toString())
                    .toList();
            assertThat(offenders).isEmpty();
        }
    }

    static Path operatorDir() {
        return RepoRoot.require().resolve("operator");
    }

    static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
