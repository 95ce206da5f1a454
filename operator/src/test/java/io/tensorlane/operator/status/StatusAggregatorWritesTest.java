package io.tensorlane.operator.status;

import static io.tensorlane.operator.status.StatusFixtures.NOW;
import static io.tensorlane.operator.status.StatusFixtures.OK;
import static io.tensorlane.operator.status.StatusFixtures.applied;
import static io.tensorlane.operator.status.StatusFixtures.in;
import static io.tensorlane.operator.status.StatusFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@link StatusAggregator} keeps across computes: equal status (no write), rejected update, failed apply. */
class StatusAggregatorWritesTest {
    @Test
    void sameInputLaterGivesAnEqualStatusSoNothingIsWritten() {
        StatusInput first = in(OK, List.of(pod("p", "r1", "ready")), applied("r1"), null, false, false);
        InferenceDeploymentStatus s1 = StatusAggregator.compute(first);
        InferenceDeploymentStatus s2 = StatusAggregator.compute(new StatusInput(
                2,
                s1,
                OK,
                "r1",
                1,
                first.pods(),
                applied("r1"),
                null,
                null,
                null,
                false,
                false,
                null,
                NOW.plusSeconds(3600),
                null,
                null,
                null));
        assertThat(Serialization.asJson(s2)).isEqualTo(Serialization.asJson(s1));
    }

    @Test
    void aRejectedUpdateIsInvalidAndKeepsClaimingTheRunningRevision() {
        ChildProblem rejected = new ChildProblem(
                "DeploymentRejected",
                "Deployment m rejected by the API server: "
                        + "spec.template.spec.tolerations[0].operator: Unsupported value: \"Maybe\" (set by spec.placement.tolerations)");
        InferenceDeploymentStatus s = StatusAggregator.compute(new StatusInput(
                2,
                new InferenceDeploymentStatus(),
                OK,
                "r2",
                1,
                List.of(pod("p", "r1", "ready")),
                applied("r1"),
                applied("r1"),
                null,
                null,
                false,
                false,
                null,
                NOW,
                rejected,
                null,
                null));
        assertThat(s.phase).isEqualTo(Phase.Invalid);
        assertThat(s.revision).isEqualTo("r1");
        var c = Conditions.find(s.conditions, StatusAggregator.INVALID_SPEC).orElseThrow();
        assertThat(c.getStatus()).isEqualTo("True");
        assertThat(c.getReason()).isEqualTo("DeploymentRejected");
        assertThat(c.getMessage()).isEqualTo(rejected.message());
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.READY)).isFalse();
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.PROGRESSING))
                .isFalse();
    }

    @Test
    void anApplyFailureIsKeptUntilTheChildrenAreUpToDateAndReadyWaitsForIt() {
        ChildProblem failed = new ChildProblem("ServiceApplyFailed", "Service m could not be applied (HTTP 500): boom");
        StatusInput withFailure = new StatusInput(
                2,
                new InferenceDeploymentStatus(),
                OK,
                "r1",
                1,
                List.of(pod("p", "r1", "ready")),
                applied("r1"),
                null,
                null,
                null,
                false,
                false,
                null,
                NOW,
                null,
                failed,
                null);
        InferenceDeploymentStatus s = StatusAggregator.compute(withFailure);
        var c = Conditions.find(s.conditions, StatusAggregator.APPLY_FAILED).orElseThrow();
        assertThat(c.getStatus()).isEqualTo("True");
        assertThat(c.getReason()).isEqualTo("ServiceApplyFailed");
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.READY)).isFalse();
        assertThat(Conditions.find(s.conditions, StatusAggregator.READY)
                        .orElseThrow()
                        .getReason())
                .isEqualTo("ServiceApplyFailed");
        assertThat(StatusAggregator.applyFailure(s)).isEqualTo(failed);

        InferenceDeploymentStatus cleared = StatusAggregator.compute(new StatusInput(
                2,
                s,
                OK,
                "r1",
                1,
                List.of(pod("p", "r1", "ready")),
                applied("r1"),
                null,
                null,
                null,
                false,
                false,
                null,
                NOW,
                null,
                null,
                null));
        assertThat(Conditions.isTrue(cleared.conditions, StatusAggregator.APPLY_FAILED))
                .isFalse();
        assertThat(Conditions.find(cleared.conditions, StatusAggregator.APPLY_FAILED)
                        .orElseThrow()
                        .getReason())
                .isEqualTo("Applied");
        assertThat(cleared.phase).isEqualTo(Phase.Ready);
        assertThat(StatusAggregator.applyFailure(cleared)).isNull();
    }
}
