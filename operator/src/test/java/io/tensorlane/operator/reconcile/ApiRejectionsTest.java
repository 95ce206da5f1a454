package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.operator.status.ApiRejections;
import io.tensorlane.operator.status.ChildProblem;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import java.time.Instant;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The API server's answers (as a 1.20 server words them) → the condition's reason and message. */
class ApiRejectionsTest {
    static KubernetesClientException answer(int code, String message, String field, String causeMessage) {
        StatusBuilder b = new StatusBuilder().withCode(code).withMessage(message);
        if (field != null) {
            b.withNewDetails()
                    .addNewCause()
                    .withField(field)
                    .withMessage(causeMessage)
                    .withReason("FieldValueInvalid")
                    .endCause()
                    .endDetails();
        }
        Status st = b.build();
        return new KubernetesClientException(st);
    }

    static Stream<Arguments> answers() {
        return Stream.of(
                Arguments.of(
                        "422 toleration",
                        answer(
                                422,
                                "Deployment.apps \"m\" is invalid: ...",
                                "spec.template.spec.tolerations[0].operator",
                                "Unsupported value: \"Maybe\""),
                        "DeploymentRejected",
                        "Deployment m rejected by the API server: spec.template.spec.tolerations[0].operator: Unsupported value: "
                                + "\"Maybe\" (set by spec.placement.tolerations)"),
                Arguments.of(
                        "422 env name",
                        answer(
                                422,
                                "is invalid",
                                "spec.template.spec.containers[0].env[9].name",
                                "Invalid value: \"A=B\": a valid environment variable name must consist of ..."),
                        "DeploymentRejected",
                        "Deployment m rejected by the API server: spec.template.spec.containers[0].env[9].name: Invalid value: "
                                + "\"A=B\": a valid environment variable name must consist of ... (set by spec.engine.env)"),
                Arguments.of(
                        "422 node selector value",
                        answer(
                                422,
                                "is invalid",
                                "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                                        + ".nodeSelectorTerms[0].matchExpressions[3].values[0]",
                                "Invalid value: \"a b\""),
                        "DeploymentRejected",
                        "Deployment m rejected by the API server: spec.template.spec.affinity.nodeAffinity"
                                + ".requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[3].values[0]: "
                                + "Invalid value: \"a b\" (set by spec.placement.nodeSelector)"),
                Arguments.of(
                        "500 typed patch (SSA on 1.20)",
                        answer(
                                500,
                                "failed to create typed patch object: "
                                        + ".spec.template.spec.containers[name=\"engine\"].env: duplicate entries for key [name=\"X\"]",
                                null,
                                null),
                        "DeploymentRejected",
                        "Deployment m rejected by the API server: failed to create typed patch object: "
                                + ".spec.template.spec.containers[name=\"engine\"].env: duplicate entries for key [name=\"X\"] "
                                + "(set by spec.engine.env)"),
                Arguments.of(
                        "409 conflict is transient",
                        answer(409, "the object has been modified", null, null),
                        "DeploymentApplyFailed",
                        "Deployment m could not be applied (HTTP 409): the object has been modified"),
                Arguments.of(
                        "403 forbidden is transient",
                        answer(403, "deployments.apps \"m\" is forbidden: exceeded quota", null, null),
                        "DeploymentApplyFailed",
                        "Deployment m could not be applied (HTTP 403): deployments.apps \"m\" is forbidden: exceeded quota"),
                Arguments.of(
                        "500 other is transient",
                        answer(500, "etcdserver: request timed out", null, null),
                        "DeploymentApplyFailed",
                        "Deployment m could not be applied (HTTP 500): etcdserver: request timed out"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answers")
    void describesTheAnswer(String why, KubernetesClientException e, String reason, String message) {
        ChildProblem p = ApiRejections.describe("Deployment", "m", e);
        assertThat(p.reason()).isEqualTo(reason);
        assertThat(p.message()).isEqualTo(message);
        assertThat(ApiRejections.isRejection(e)).isEqualTo(reason.endsWith("Rejected"));
    }

    @Test
    void aLongAnswerIsCut() {
        ChildProblem p = ApiRejections.describe("Service", "s", answer(422, "x".repeat(5000), null, null));
        assertThat(p.message()).hasSize(ApiRejections.MAX_MESSAGE).endsWith("…");
    }

    @Test
    void errorStatusNeverClaimsARevisionThatWasNotApplied() {
        InferenceDeployment d = new InferenceDeployment();
        d.getMetadata().setName("m");
        d.getMetadata().setGeneration(3L);
        InferenceDeploymentStatus before = new InferenceDeploymentStatus();
        before.revision = "old";
        d.setStatus(before);
        InferenceDeploymentStatus written = new InferenceDeploymentStatus();
        written.revision = "new";
        Instant now = Instant.parse("2026-12-01T00:00:00Z");
        KubernetesClientException cause = answer(500, "etcdserver: request timed out", null, null);

        var deploymentFailed = new ChildApplyException(
                ApiRejections.describe("Deployment", "m", cause), Children.withRevisionOf(written, before), cause);
        InferenceDeploymentStatus s = ErrorStatus.status(d, deploymentFailed, now);
        assertThat(s.revision).isEqualTo("old");
        var c = Conditions.find(s.conditions, StatusAggregator.APPLY_FAILED).orElseThrow();
        assertThat(c.getStatus()).isEqualTo("True");
        assertThat(c.getReason()).isEqualTo("DeploymentApplyFailed");
        assertThat(c.getObservedGeneration()).isEqualTo(3L);

        var serviceFailed = new ChildApplyException(ApiRejections.describe("Service", "m", cause), written, cause);
        assertThat(ErrorStatus.status(d, serviceFailed, now).revision)
                .as("the Deployment was applied")
                .isEqualTo("new");

        InferenceDeploymentStatus other = ErrorStatus.status(d, new IllegalStateException("boom"), now);
        assertThat(other.revision).isEqualTo("old");
        assertThat(Conditions.find(other.conditions, StatusAggregator.APPLY_FAILED)
                        .orElseThrow()
                        .getReason())
                .isEqualTo("ReconcileFailed");
        assertThat(d.getStatus()).as("the cached object is not changed").isSameAs(before);
        assertThat(before.conditions).isEmpty();
    }

    @Test
    void aDeletedDeploymentGetsNoErrorStatus() {
        assertThat(ErrorStatus.primaryGone(answer(404, "inferencedeployments \"m\" not found", null, null)))
                .isTrue();
        KubernetesClientException childGone = answer(404, "namespaces \"x\" not found", null, null);
        assertThat(ErrorStatus.primaryGone(
                        new ChildApplyException(ApiRejections.describe("Service", "m", childGone), null, childGone)))
                .isFalse();
        assertThat(ErrorStatus.primaryGone(answer(500, "boom", null, null))).isFalse();
    }

    @Test
    void aWrappedFailureIsStillNamedAndANonRejectionKeepsTheServersWholeMessage() {
        KubernetesClientException terminating = new KubernetesClientException(new StatusBuilder()
                .withCode(403)
                .withMessage(
                        "deployments.apps \"m\" is forbidden: unable to create new content in namespace x because it is "
                                + "being terminated")
                .withNewDetails()
                .addNewCause()
                .withField("metadata.namespace")
                .withMessage("namespace x is being terminated")
                .endCause()
                .endDetails()
                .build());
        var child = new ChildApplyException(ApiRejections.describe("Deployment", "m", terminating), null, terminating);
        ChildProblem p = ErrorStatus.describe("m", new io.javaoperatorsdk.operator.OperatorException(child));
        assertThat(p.reason()).isEqualTo("DeploymentApplyFailed");
        assertThat(p.message())
                .isEqualTo("Deployment m could not be applied (HTTP 403): deployments.apps \"m\" is "
                        + "forbidden: unable to create new content in namespace x because it is being terminated");
        assertThat(ErrorStatus.primaryGone(new RuntimeException(answer(404, "not found", null, null))))
                .isTrue();
    }
}
