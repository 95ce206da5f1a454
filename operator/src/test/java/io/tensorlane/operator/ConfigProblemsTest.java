package io.tensorlane.operator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The start-up check of the configuration (pure): each bad value is refused with its key named. */
class ConfigProblemsTest {
    @Test
    void theDefaultsAreUsable() {
        assertThat(ConfigProblems.of(TestConfig.defaults())).isEmpty();
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "tensorlane.runtime-image|Tensorlane/Runtime:1|tensorlane.runtime-image (TENSORLANE_RUNTIME_IMAGE)",
                "tensorlane.runtime-image|' '|tensorlane.runtime-image",
                "tensorlane.topology-max-age|0s|tensorlane.topology-max-age must be positive",
                "tensorlane.heuristic-grace|-1s|tensorlane.heuristic-grace must be positive",
                "tensorlane.requeue-while-rolling-out|0s|tensorlane.requeue-while-rolling-out must be positive",
                "tensorlane.rollback-backoff|0s|tensorlane.rollback-backoff must be positive",
                "tensorlane.measurement-max-age|0s|tensorlane.measurement-max-age must be positive",
                "tensorlane.pod.run-as-user|0|tensorlane.pod.run-as-user must be a non-root UID",
                "tensorlane.preflight.deadline|500ms|tensorlane.preflight.deadline must be at least 1 s",
                "tensorlane.preflight.grace|0s|tensorlane.preflight.grace must be positive",
                "tensorlane.preflight.ttl|0s|tensorlane.preflight.ttl must be positive",
                "tensorlane.preflight.recheck|0s|tensorlane.preflight.recheck must be positive",
                "tensorlane.preflight.bench-max-bytes|1023|tensorlane.preflight.bench-max-bytes must be at least 1024",
                "tensorlane.model.hub-endpoint|huggingface.co|tensorlane.model.hub-endpoint must be an http(s) URL",
                "tensorlane.model.hub-endpoint|http://|tensorlane.model.hub-endpoint must be an http(s) URL",
                "tensorlane.model.request-timeout|0s|tensorlane.model.request-timeout must be positive",
                "tensorlane.model.branch-ttl|0s|tensorlane.model.branch-ttl must be positive",
                "tensorlane.model.failure-ttl|0s|tensorlane.model.failure-ttl must be positive",
                "tensorlane.model.threads|0|tensorlane.model.threads must be at least 1",
            })
    void eachBadValueIsRefusedNamingItsKey(String key, String value, String message) {
        TensorlaneConfig c = TestConfig.unchecked(key, value);

        assertThat(ConfigProblems.of(c)).singleElement().asString().startsWith(message);
        assertThatThrownBy(() -> ConfigProblems.require(c)).hasMessageContaining(message);
    }
}
