package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.operator.status.ChildProblem;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which revision a reconcile that applies nothing may keep claiming ({@link Children#stillClaimed}). */
class ChildrenClaimTest {
    static final AppliedSpec LAST = new AppliedSpec();
    static final ChildProblem REJECTED = new ChildProblem("DeploymentRejected", "spec.engine.env: Invalid value");

    static Stream<Arguments> cases() {
        var deployment = new DeploymentBuilder()
                .withNewMetadata()
                .withName("d")
                .endMetadata()
                .build();
        var service = new ServiceBuilder()
                .withNewMetadata()
                .withName("d")
                .endMetadata()
                .build();
        return Stream.of(
                // a rejected update of a running deployment: the running revision stays claimed
                Arguments.of(
                        "rejected, Deployment runs",
                        LAST,
                        new Observation(List.of(), deployment, service, List.of()),
                        REJECTED,
                        LAST),
                // a refused first apply whose claiming status is still the cached one (the Service not yet gone from
                // the cache)
                Arguments.of(
                        "rejected, only the Service in the cache",
                        LAST,
                        new Observation(List.of(), null, service, List.of()),
                        REJECTED,
                        null),
                Arguments.of(
                        "rejected, no child", LAST, new Observation(List.of(), null, null, List.of()), REJECTED, null),
                Arguments.of(
                        "rejected, nothing claimed",
                        null,
                        new Observation(List.of(), null, null, List.of()),
                        REJECTED,
                        null),
                // not rejected: a just-applied Deployment may not be in the cache yet; the claim stays
                Arguments.of(
                        "not rejected, no Deployment in the cache",
                        LAST,
                        new Observation(List.of(), null, null, List.of()),
                        null,
                        LAST),
                Arguments.of(
                        "not rejected, Deployment runs",
                        LAST,
                        new Observation(List.of(), deployment, service, List.of()),
                        null,
                        LAST));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void claim(String name, AppliedSpec last, Observation obs, ChildProblem rejected, AppliedSpec expected) {
        assertThat(Children.stillClaimed(last, obs, rejected)).isSameAs(expected);
    }
}
