package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The shared Hub client's rules that need no server; its calls are tested against a loopback Hub by both users
 * (operator ModelInspectorTest, runtime FetchModelCommandTest / FetchExitCodesTest, with testkit's LocalHub).
 */
class HubClientTest {
    @Test
    void encodesRevisionsAndPaths() {
        assertThat(HubClient.segment("refs/pr/1")).isEqualTo("refs%2Fpr%2F1");
        assertThat(HubClient.path("original/a b+c.safetensors")).isEqualTo("original/a%20b%2Bc.safetensors");
    }

    @ParameterizedTest(name = "{0} vs {1}: {2}")
    @CsvSource({
        "https://hub.example/a, https://hub.example/b, true",
        "https://hub.example/a, https://hub.example:443/b, true",
        "https://HUB.example/a, https://hub.example/b, true",
        "https://hub.example/a, https://cdn.example/b, false",
        "http://127.0.0.1:8080/a, http://127.0.0.1:8081/a, false",
        "https://hub.example/a, http://hub.example/a, false"
    })
    void theTokenGoesOnlyToTheEndpointsOrigin(String a, String b, boolean same) {
        assertThat(HubClient.sameOrigin(URI.create(b), URI.create(a))).isEqualTo(same);
    }

    @Test
    void retriesServerErrorsRateLimitsAndTimeoutsOnly() {
        assertThat(HubClient.retryable(500)).isTrue();
        assertThat(HubClient.retryable(503)).isTrue();
        assertThat(HubClient.retryable(429)).isTrue();
        assertThat(HubClient.retryable(408)).isTrue();
        assertThat(HubClient.retryable(400)).isFalse();
        assertThat(HubClient.retryable(404)).isFalse();
        assertThat(HubClient.isRedirect(302)).isTrue();
        assertThat(HubClient.isRedirect(304)).isFalse();
    }

    @Test
    void messagesShowTheEndpointWithoutUserInfoOrQuery() {
        HubClient c = new HubClient(
                URI.create("https://user:pw@hub.example:8443/mirror?x=1"),
                Duration.ofSeconds(1),
                "t",
                new HubClient.TokenHint("a", "b"));
        assertThat(c.shown()).isEqualTo("https://hub.example:8443/mirror");
        assertThat(HubClient.what("o/m", "abc", "config.json")).isEqualTo("file config.json of o/m at commit abc");
    }
}
