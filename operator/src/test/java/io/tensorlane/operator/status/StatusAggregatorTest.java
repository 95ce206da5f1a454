package io.tensorlane.operator.status;

import static io.tensorlane.operator.status.StatusFixtures.NOW;
import static io.tensorlane.operator.status.StatusFixtures.OK;
import static io.tensorlane.operator.status.StatusFixtures.applied;
import static io.tensorlane.operator.status.StatusFixtures.in;
import static io.tensorlane.operator.status.StatusFixtures.pod;
import static io.tensorlane.operator.status.StatusFixtures.rb;
import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.model.ModelResolution;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The phase and condition table of {@link StatusAggregator}, and its model conditions (inspecting, failed, known). */
class StatusAggregatorTest {
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
}
