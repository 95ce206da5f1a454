package io.tensorlane.operator.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.operator.rollback.RollbackDecider;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the error status keeps when the Deployment apply fails after the status write ({@link Children#withRevisionOf}):
 * the revision that runs, unless the write recorded a rollback or remediation attempt, whose target stays claimed so
 * that the next reconcile applies it instead of taking the failing spec for the effective one.
 */
class FailedRollbackApplyTest {
    static final InferenceDeploymentSpec FAILING = new InferenceDeploymentSpec(); // the user's spec of generation 3
    static final InferenceDeploymentSpec STABLE = new InferenceDeploymentSpec();

    static RollbackStatus rb(Long generation, Integer attempts) {
        RollbackStatus r = new RollbackStatus();
        r.generation = generation;
        r.attempts = attempts;
        return r;
    }

    static Stream<Arguments> attempts() {
        return Stream.of(
                Arguments.of("no rollback status", null, null, false),
                Arguments.of("a first attempt for the generation", null, rb(3L, 1), true),
                Arguments.of("a first attempt after another generation's", rb(2L, 1), rb(3L, 1), true),
                Arguments.of("a second attempt", rb(3L, 1), rb(3L, 2), true),
                Arguments.of("unchanged (a failure reported, nothing applied)", rb(3L, 1), rb(3L, 1), false),
                Arguments.of("a new generation's status without attempts", rb(2L, 1), rb(3L, 0), false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("attempts")
    void newAttempt(String what, RollbackStatus before, RollbackStatus written, boolean expected) {
        assertThat(Children.newAttempt(before, written)).isEqualTo(expected);
    }

    static AppliedSpec applied(String revision, InferenceDeploymentSpec spec) {
        AppliedSpec a = new AppliedSpec();
        a.generation = 3L;
        a.revision = revision;
        a.spec = spec;
        return a;
    }

    @Test
    void aRollbackWhoseDeploymentApplyFailedIsAppliedByTheNextReconcile() {
        InferenceDeploymentStatus before = new InferenceDeploymentStatus();
        before.lastAppliedSpec = applied("failing", FAILING);
        before.revision = "failing";
        before.rollback = rb(2L, 1);
        InferenceDeploymentStatus written = new InferenceDeploymentStatus();
        written.lastAppliedSpec = applied("stable", STABLE);
        written.revision = "stable";
        written.rollback = rb(3L, 1);
        written.rollback.handledRevision = "failing";

        InferenceDeploymentStatus kept = Children.withRevisionOf(written, before);
        assertThat(kept.lastAppliedSpec.revision).isEqualTo("stable");
        assertThat(RollbackDecider.effectiveSpec(FAILING, 3, kept))
                .as("the next reconcile renders the rollback's target")
                .isSameAs(kept.lastAppliedSpec.spec)
                .isNotSameAs(FAILING);

        InferenceDeploymentStatus oldRule = io.fabric8.kubernetes.client.utils.Serialization.clone(written);
        oldRule.lastAppliedSpec = before.lastAppliedSpec; // the running revision put back beside the new record
        assertThat(RollbackDecider.effectiveSpec(FAILING, 3, oldRule))
                .as("the failing spec, its failure recorded as handled: never rolled back")
                .isSameAs(FAILING);
    }

    @Test
    void withoutANewAttemptTheRunningRevisionIsPutBack() {
        InferenceDeploymentStatus before = new InferenceDeploymentStatus();
        before.lastAppliedSpec = applied("old", STABLE);
        before.revision = "old";
        InferenceDeploymentStatus written = new InferenceDeploymentStatus();
        written.lastAppliedSpec = applied("new", FAILING);
        written.revision = "new";
        InferenceDeploymentStatus s = Children.withRevisionOf(written, before);
        assertThat(s.lastAppliedSpec.revision).isEqualTo("old");
        assertThat(s.revision).isEqualTo("old");
    }
}
