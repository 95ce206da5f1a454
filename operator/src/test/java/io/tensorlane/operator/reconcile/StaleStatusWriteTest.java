package io.tensorlane.operator.reconcile;

import static io.tensorlane.operator.reconcile.ApiRejectionsTest.answer;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.operator.status.ApiRejections;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Which failures mean "this reconcile read a stale copy" (its own status write refused on the resourceVersion
 * precondition: nothing it decided lands, it looks again), and which version the error-status write is conditioned on.
 */
class StaleStatusWriteTest {
    static Stream<Arguments> failures() {
        KubernetesClientException conflict = answer(
                409,
                "Operation cannot be fulfilled on inferencedeployments.tensorlane.io \"m\": the object has been "
                        + "modified; please apply your changes to the latest version and try again",
                null,
                null);
        KubernetesClientException childConflict = answer(409, "deployments.apps \"m\" conflict", null, null);
        return Stream.of(
                Arguments.of("the status write's 409", conflict, true),
                Arguments.of("the same, wrapped by JOSDK", new RuntimeException(conflict), true),
                Arguments.of(
                        "a child's 409 (its own failure, not a stale read)",
                        new ChildApplyException(
                                ApiRejections.describe("Deployment", "m", childConflict), null, childConflict),
                        false),
                Arguments.of("deleted meanwhile", answer(404, "not found", null, null), false),
                Arguments.of("invalid", answer(422, "status.phase: Unsupported value", "status.phase", null), false),
                Arguments.of("API server away", answer(503, "unavailable", null, null), false),
                Arguments.of("not the API server's answer", new IllegalStateException("boom"), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void staleRead(String what, Exception e, boolean stale) {
        assertThat(StatusWrites.staleRead(e)).isEqualTo(stale);
    }

    static Stream<Arguments> versions() {
        KubernetesClientException cause = answer(500, "etcdserver: request timed out", null, null);
        var problem = ApiRejections.describe("Deployment", "m", cause);
        InferenceDeploymentStatus written = new InferenceDeploymentStatus();
        return Stream.of(
                Arguments.of("not a child's failure: the version read", new IllegalStateException("boom"), "7"),
                Arguments.of(
                        "a child failed after this reconcile wrote version 9",
                        new ChildApplyException(problem, written, cause).basedOn("9"),
                        "9"),
                Arguments.of(
                        "the same, wrapped",
                        new RuntimeException(new ChildApplyException(problem, written, cause).basedOn("9")),
                        "9"),
                Arguments.of(
                        "a dry-run failed (no status after it): the version read",
                        new ChildApplyException(problem, null, cause).basedOn("9"),
                        "7"),
                Arguments.of(
                        "version not attached: the version read",
                        new ChildApplyException(problem, written, cause),
                        "7"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("versions")
    void theErrorStatusIsConditionedOnTheVersionItIsComputedFrom(String what, Exception e, String basedOn) {
        InferenceDeployment d = new InferenceDeployment();
        d.getMetadata().setName("m");
        d.getMetadata().setResourceVersion("7");
        assertThat(ErrorStatus.basedOn(d, e)).isEqualTo(basedOn);
    }
}
