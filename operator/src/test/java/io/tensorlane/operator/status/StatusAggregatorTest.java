package io.tensorlane.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.AppliedSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.model.ModelResolution;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.render.Renderer;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class StatusAggregatorTest {
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

    @Test
    void inspectingModelIsProgressingWithReasonInspectingModel() {
        var model = ModelResolution.pending(ModelSource.parse("hf://org/m"), "reading config.json of hf://org/m@main");
        InferenceDeploymentStatus s = StatusAggregator.compute(new StatusInput(
                2,
                new InferenceDeploymentStatus(),
                model.blockingPlan(),
                null,
                1,
                List.of(),
                null,
                null,
                null,
                null,
                false,
                false,
                null,
                NOW,
                null,
                null,
                model));
        assertThat(s.phase).isEqualTo(Phase.Progressing);
        assertThat(Conditions.find(s.conditions, StatusAggregator.PROGRESSING))
                .get()
                .satisfies(c -> {
                    assertThat(c.getStatus()).isEqualTo("True");
                    assertThat(c.getReason()).isEqualTo("InspectingModel");
                    assertThat(c.getMessage()).isEqualTo("reading config.json of hf://org/m@main");
                });
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.MODEL_UNAVAILABLE))
                .isFalse();
        assertThat(s.model).isNull();
    }

    @Test
    void aModelThatCannotBeReadIsInvalidWithModelUnavailableAndItsReason() {
        var model =
                ModelResolution.failed(ModelSource.parse("hf://org/m"), "Unauthorized", "the Hub answered 401 for ...");
        InferenceDeploymentStatus s = StatusAggregator.compute(new StatusInput(
                2,
                new InferenceDeploymentStatus(),
                model.blockingPlan(),
                null,
                1,
                List.of(),
                null,
                null,
                null,
                null,
                false,
                false,
                null,
                NOW,
                null,
                null,
                model));
        assertThat(s.phase).isEqualTo(Phase.Invalid);
        assertThat(Conditions.find(s.conditions, StatusAggregator.MODEL_UNAVAILABLE))
                .get()
                .satisfies(c -> {
                    assertThat(c.getStatus()).isEqualTo("True");
                    assertThat(c.getReason()).isEqualTo("Unauthorized");
                    assertThat(c.getMessage()).isEqualTo("the Hub answered 401 for ...");
                });
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.INVALID_SPEC))
                .isFalse();
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.PROGRESSING))
                .isFalse();
    }

    @Test
    void knownModelFactsLandInStatusModel() {
        ModelStatus facts = new ModelStatus();
        facts.source = "hf://org/m@main";
        facts.revision = "a".repeat(40);
        facts.architecture = "LlamaForCausalLM";
        var model = ModelResolution.known(ModelSource.parse("hf://org/m"), facts);
        InferenceDeploymentStatus s = StatusAggregator.compute(new StatusInput(
                2,
                new InferenceDeploymentStatus(),
                OK,
                "r1",
                1,
                List.of(),
                null,
                null,
                null,
                null,
                false,
                false,
                null,
                NOW,
                null,
                null,
                model));
        assertThat(s.model).isSameAs(facts);
        assertThat(Conditions.find(s.conditions, StatusAggregator.MODEL_UNAVAILABLE))
                .get()
                .satisfies(c ->
                        assertThat(c.getMessage()).isEqualTo("LlamaForCausalLM hf://org/m@main at " + "a".repeat(40)));
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("nothing applied yet", in(OK, List.of(), null, null, false, false), Phase.Pending, false),
                Arguments.of(
                        "rolling out",
                        in(OK, List.of(pod("p", "r1", "starting")), applied("r1"), null, false, false),
                        Phase.Progressing,
                        false),
                Arguments.of(
                        "all ready",
                        in(OK, List.of(pod("p", "r1", "ready")), applied("r1"), null, false, false),
                        Phase.Ready,
                        true),
                Arguments.of(
                        "ready but an old pod crash-loops",
                        in(
                                OK,
                                List.of(pod("p", "r1", "ready"), pod("q", "r0", "crashloop")),
                                applied("r1"),
                                null,
                                false,
                                false),
                        Phase.Degraded,
                        false),
                Arguments.of(
                        "terminated with error",
                        in(OK, List.of(pod("p", "r1", "error")), applied("r1"), null, true, false),
                        Phase.Degraded,
                        false),
                Arguments.of(
                        "old revision ready, new applied",
                        in(OK, List.of(pod("p", "r0", "ready")), applied("r1"), null, false, false),
                        Phase.Progressing,
                        false),
                Arguments.of(
                        "rolled back and ready",
                        in(OK, List.of(pod("p", "r1", "ready")), applied("r1"), rb(Action.Rollback), false, false),
                        Phase.RolledBack,
                        true),
                Arguments.of(
                        "remediation rolling out",
                        in(
                                OK,
                                List.of(pod("p", "r1", "starting")),
                                applied("r1"),
                                rb(Action.LowerMemoryFraction),
                                false,
                                false),
                        Phase.Remediating,
                        false),
                Arguments.of(
                        "gave up",
                        in(
                                OK,
                                List.of(pod("p", "r1", "error")),
                                applied("r1"),
                                rb(Action.LowerMemoryFraction),
                                true,
                                true),
                        Phase.Failed,
                        false),
                Arguments.of(
                        "unschedulable",
                        in(
                                new Plan(Outcome.UNSCHEDULABLE, "no node", null, null, null, List.of()),
                                List.of(),
                                null,
                                null,
                                false,
                                false),
                        Phase.Unschedulable,
                        false),
                Arguments.of(
                        "does not fit",
                        in(
                                new Plan(Outcome.DOES_NOT_FIT, "too big", null, null, null, List.of()),
                                List.of(),
                                null,
                                null,
                                false,
                                false),
                        Phase.DoesNotFit,
                        false),
                Arguments.of(
                        "invalid",
                        in(
                                new Plan(Outcome.INVALID_SPEC, "custom without P2P", null, null, null, List.of()),
                                List.of(),
                                null,
                                null,
                                false,
                                false),
                        Phase.Invalid,
                        false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void phaseAndReady(String name, StatusInput input, Phase phase, boolean ready) {
        InferenceDeploymentStatus s = StatusAggregator.compute(input);
        assertThat(s.phase).isEqualTo(phase);
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.READY)).isEqualTo(ready);
        assertThat(s.conditions)
                .extracting(c -> c.getType())
                .containsExactly(
                        StatusAggregator.READY,
                        StatusAggregator.PROGRESSING,
                        StatusAggregator.DEGRADED,
                        StatusAggregator.ROLLED_BACK,
                        StatusAggregator.INVALID_SPEC,
                        StatusAggregator.UNSCHEDULABLE,
                        StatusAggregator.DOES_NOT_FIT,
                        StatusAggregator.MEMORY_FRACTION_TOO_HIGH,
                        StatusAggregator.ROLLBACK_FAILED,
                        StatusAggregator.APPLY_FAILED,
                        StatusAggregator.MODEL_UNAVAILABLE);
        assertThat(s.conditions).allSatisfy(c -> {
            assertThat(c.getMessage()).isNotBlank(); // a 1.20 API server rejects "" in applied custom resources
            assertThat(c.getObservedGeneration()).isEqualTo(2L);
        });
        String outcomeCondition = switch (phase) {
            case Unschedulable -> StatusAggregator.UNSCHEDULABLE;
            case DoesNotFit -> StatusAggregator.DOES_NOT_FIT;
            case Invalid -> StatusAggregator.INVALID_SPEC;
            default -> null;
        };
        if (outcomeCondition != null) {
            assertThat(Conditions.find(s.conditions, outcomeCondition)
                            .orElseThrow()
                            .getMessage())
                    .isEqualTo(input.plan().message());
        }
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.ROLLBACK_FAILED))
                .isEqualTo(phase == Phase.Failed);
    }

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
