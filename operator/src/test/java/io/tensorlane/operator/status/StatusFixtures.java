package io.tensorlane.operator.status;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.render.Renderer;
import java.time.Instant;
import java.util.List;

/** Shared inputs of the {@link StatusAggregator} tests: pods in a given state, applied specs, rollback history. */
final class StatusFixtures {
    private StatusFixtures() {}

    static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
    static final Plan OK = new Plan(Outcome.OK, null, null, null, null, List.of());

    static Pod pod(String name, String revision, String state) {
        var b = new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels(Renderer.LABEL_REVISION, revision)
                .endMetadata()
                .withNewStatus();
        switch (state) {
            case "ready" ->
                b.addNewCondition()
                        .withType("Ready")
                        .withStatus("True")
                        .endCondition()
                        .addNewContainerStatus()
                        .withName("engine")
                        .withNewState()
                        .withNewRunning()
                        .endRunning()
                        .endState()
                        .endContainerStatus();
            case "crashloop" ->
                b.addNewContainerStatus()
                        .withName("engine")
                        .withNewState()
                        .withNewWaiting()
                        .withReason("CrashLoopBackOff")
                        .endWaiting()
                        .endState()
                        .endContainerStatus();
            case "error" ->
                b.addNewContainerStatus()
                        .withName("engine")
                        .withNewState()
                        .withNewTerminated()
                        .withReason("Error")
                        .withExitCode(1)
                        .endTerminated()
                        .endState()
                        .endContainerStatus();
            default -> b.addNewCondition().withType("Ready").withStatus("False").endCondition();
        }
        return b.endStatus().build();
    }

    static AppliedSpec applied(String revision) {
        AppliedSpec a = new AppliedSpec();
        a.generation = 2L;
        a.revision = revision;
        return a;
    }

    static RollbackStatus rb(Action action) {
        RollbackStatus r = new RollbackStatus();
        r.generation = 2L;
        r.attempts = 1;
        RollbackStatus.Attempt a = new RollbackStatus.Attempt();
        a.attempt = 1;
        a.action = action;
        a.reason = "CudaOutOfMemory on p";
        r.history.add(a);
        return r;
    }

    static StatusInput in(
            Plan plan, List<Pod> pods, AppliedSpec applied, RollbackStatus rb, boolean active, boolean failed) {
        return new StatusInput(
                2,
                new InferenceDeploymentStatus(),
                plan,
                "r1",
                1,
                pods,
                applied,
                null,
                rb,
                null,
                active,
                failed,
                null,
                NOW,
                null,
                null,
                null);
    }
}
