package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.net.ConnectException;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** What the probe prints when the API server cannot be reached or refuses: one line naming the reason. */
class PublisherMessageTest {
    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(
                        new KubernetesClientException(
                                "An error has occurred.",
                                new RuntimeException(
                                        "wrapped", new ConnectException("Connection refused: /127.0.0.1:1"))),
                        "ConnectException: Connection refused: /127.0.0.1:1"),
                Arguments.of(
                        new KubernetesClientException(new StatusBuilder()
                                .withCode(403)
                                .withMessage(
                                        "gputopologies.tensorlane.io \"n\" is forbidden: User \"x\" cannot patch\nsecond line")
                                .build()),
                        "HTTP 403 gputopologies.tensorlane.io \"n\" is forbidden: User \"x\" cannot patch"),
                Arguments.of(new KubernetesClientException("no cause\nat all"), "no cause"));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void oneLine(KubernetesClientException e, String expected) {
        assertThat(Publisher.oneLine(e)).isEqualTo(expected);
    }
}
