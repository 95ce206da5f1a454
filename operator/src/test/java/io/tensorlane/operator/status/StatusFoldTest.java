package io.tensorlane.operator.status;

import static io.tensorlane.operator.status.StatusFixtures.OK;
import static io.tensorlane.operator.status.StatusFixtures.applied;
import static io.tensorlane.operator.status.StatusFixtures.in;
import static io.tensorlane.operator.status.StatusFixtures.pod;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.TopologyChoice;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Which status changes are written at once and which wait to be folded into the next transition. */
class StatusFoldTest {
    private static final Instant T0 = Instant.parse("2026-12-01T18:00:00Z");

    private static InferenceDeploymentStatus base() {
        InferenceDeploymentStatus s = new InferenceDeploymentStatus();
        s.phase = Phase.Progressing;
        s.replicas = 0;
        s.readyReplicas = 0;
        s.topology = new TopologyChoice();
        s.topology.nodes = List.of("gpu-a", "gpu-b");
        Condition ready = new Condition();
        ready.setType("Ready");
        ready.setStatus("False");
        ready.setReason("Progressing");
        ready.setMessage("0/1 replicas Ready on revision r1");
        s.conditions = List.of(ready);
        return s;
    }

    private static InferenceDeploymentStatus changed(Consumer<InferenceDeploymentStatus> change) {
        InferenceDeploymentStatus s = Serialization.clone(base());
        change.accept(s);
        return s;
    }

    static Stream<Arguments> changes() {
        return Stream.of(
                Arguments.of("pods of the revision", false, (Consumer<InferenceDeploymentStatus>) s -> s.replicas = 1),
                Arguments.of("nodes the pods run on", false, (Consumer<InferenceDeploymentStatus>)
                        s -> s.topology.nodes = List.of("gpu-b")),
                Arguments.of("a condition's message", false, (Consumer<InferenceDeploymentStatus>)
                        s -> s.conditions.get(0).setMessage("pod p: ContainerCreating")),
                Arguments.of("ready replicas", true, (Consumer<InferenceDeploymentStatus>) s -> s.readyReplicas = 1),
                Arguments.of("phase", true, (Consumer<InferenceDeploymentStatus>) s -> s.phase = Phase.Ready),
                Arguments.of("a condition's status", true, (Consumer<InferenceDeploymentStatus>)
                        s -> s.conditions.get(0).setStatus("True")),
                Arguments.of("a condition's reason", true, (Consumer<InferenceDeploymentStatus>)
                        s -> s.conditions.get(0).setReason("PodFailing")),
                Arguments.of("revision", true, (Consumer<InferenceDeploymentStatus>) s -> s.revision = "r2"),
                Arguments.of("interconnect", true, (Consumer<InferenceDeploymentStatus>)
                        s -> s.topology.interconnect = "NVLink"));
    }

    @ParameterizedTest(name = "{0}: written at once = {1}")
    @MethodSource("changes")
    void transitionsAreWrittenAtOnceDetailsWait(
            String what, boolean transition, Consumer<InferenceDeploymentStatus> change) {
        StatusFold fold = new StatusFold();
        StatusFold.Decision d = fold.decide("u", base(), changed(change), T0);
        if (transition) {
            assertThat(d).isInstanceOf(StatusFold.Write.class);
        } else {
            assertThat(d).isEqualTo(new StatusFold.Wait(StatusFold.DETAIL_DELAY));
        }
    }

    @Test
    void aWaitingDetailIsWrittenWhenItsDelayIsOverEvenWithoutATransition() {
        StatusFold fold = new StatusFold();
        InferenceDeploymentStatus more = changed(s -> s.replicas = 1);
        assertThat(fold.decide("u", base(), more, T0)).isEqualTo(new StatusFold.Wait(Duration.ofSeconds(2)));
        // another pod event 1.5 s later: still the first detail's delay
        assertThat(fold.decide("u", base(), more, T0.plusMillis(1500)))
                .isEqualTo(new StatusFold.Wait(Duration.ofMillis(500)));
        // the rescheduled reconcile
        assertThat(fold.decide("u", base(), more, T0.plusSeconds(2))).isInstanceOf(StatusFold.Write.class);
        assertThat(fold.waiting()).isZero();
        // a new detail starts a new delay
        assertThat(fold.decide("u", more, changed(s -> s.replicas = 2), T0.plusSeconds(3)))
                .isEqualTo(new StatusFold.Wait(Duration.ofSeconds(2)));
    }

    @Test
    void aTransitionCarriesTheWaitingDetailsAndEndsTheirWait() {
        StatusFold fold = new StatusFold();
        assertThat(fold.decide("u", base(), changed(s -> s.replicas = 1), T0)).isInstanceOf(StatusFold.Wait.class);
        InferenceDeploymentStatus ready = changed(s -> {
            s.replicas = 1;
            s.readyReplicas = 1;
        });
        assertThat(fold.decide("u", base(), ready, T0.plusMillis(300))).isInstanceOf(StatusFold.Write.class);
        assertThat(fold.waiting()).isZero();
        assertThat(fold.decide("u", ready, Serialization.clone(ready), T0.plusSeconds(1)))
                .isInstanceOf(StatusFold.Unchanged.class);
    }

    @Test
    void objectsWaitApartAndForgottenEntriesGo() {
        StatusFold fold = new StatusFold();
        InferenceDeploymentStatus more = changed(s -> s.replicas = 1);
        fold.decide("a", base(), more, T0);
        assertThat(fold.decide("b", base(), more, T0.plusSeconds(1)))
                .isEqualTo(new StatusFold.Wait(Duration.ofSeconds(2)));
        assertThat(fold.waiting()).isEqualTo(2);
        // "a" was deleted while waiting: its entry goes once it is ten delays old
        fold.decide("c", base(), more, T0.plusSeconds(25));
        assertThat(fold.waiting()).isEqualTo(1);
    }

    @Test
    void aRolloutsPodEventsFoldIntoTheReadyTransition() {
        StatusFold fold = new StatusFold();
        InferenceDeploymentStatus started =
                StatusAggregator.compute(in(OK, List.of(), applied("r1"), null, false, false));
        InferenceDeploymentStatus podCreated =
                StatusAggregator.compute(in(OK, List.of(pod("p", "r1", "pending")), applied("r1"), null, false, false));
        InferenceDeploymentStatus podReady =
                StatusAggregator.compute(in(OK, List.of(pod("p", "r1", "ready")), applied("r1"), null, false, false));
        assertThat(started.phase).isEqualTo(Phase.Progressing);
        assertThat(podCreated.replicas).isEqualTo(1);
        assertThat(fold.decide("u", started, podCreated, T0)).isInstanceOf(StatusFold.Wait.class);
        assertThat(fold.decide("u", started, podReady, T0.plusSeconds(1))).isInstanceOf(StatusFold.Write.class);
        assertThat(podReady.phase).isEqualTo(Phase.Ready);
    }
}
