package io.tensorlane.operator.model;

import static io.tensorlane.operator.model.DownloadProgressTest.M;
import static io.tensorlane.operator.model.DownloadProgressTest.T0;
import static io.tensorlane.operator.model.DownloadProgressTest.pod;
import static io.tensorlane.operator.model.DownloadProgressTest.running;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.api.v1alpha1.DownloadStatus;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.contract.FetchProgress;
import io.tensorlane.operator.model.DownloadProgress.PodDownload;
import io.tensorlane.operator.model.DownloadProgress.State;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A draft model's download step (init container fetch-draft-model) in status.draftDownload: its own status, messages
 * and events naming the draft, read from its own init container, and Progressing carrying whichever step runs.
 */
class DraftDownloadProgressTest {
    static final String D = "org/d@3333333333333333333333333333333333333333";

    static PodDownload draftRunning(String pod, Long done) {
        return new PodDownload(
                pod,
                State.RUNNING,
                D,
                done == null ? null : new FetchProgress(D, FetchProgress.RUNNING, done, 2_500_000_000L, 0, 1),
                null);
    }

    /** prev, pods, expected phase and message of the draft model's step (status.draftDownload). */
    static Stream<Arguments> draftTransitions() {
        DownloadStatus at16 =
                DownloadProgress.next(null, List.of(draftRunning("p0", 400_000_000L)), T0, DownloadProgress.Step.DRAFT);
        return Stream.of(
                Arguments.of("no draft step runs", null, List.of(), null, null),
                Arguments.of(
                        "the draft's step starts",
                        null,
                        List.of(draftRunning("p0", null)),
                        "Downloading",
                        "fetching draft model " + D + ": starting"),
                Arguments.of(
                        "its progress names the draft model",
                        null,
                        List.of(draftRunning("p0", 400_000_000L)),
                        "Downloading",
                        "fetching draft model " + D + ": 0.4 of 2.5 GB (16%)"),
                Arguments.of(
                        "slowest of two pods",
                        at16,
                        List.of(draftRunning("p0", 2_000_000_000L), draftRunning("p1", 100_000_000L)),
                        "Downloading",
                        "fetching draft model " + D + ": 0.1 of 2.5 GB (4%) (slowest of 2 pods)"),
                Arguments.of(
                        "it ended",
                        at16,
                        List.of(new PodDownload("p0", State.DONE, D, null, null)),
                        "Complete",
                        "fetched draft model " + D + " (2.5 of 2.5 GB)"),
                Arguments.of(
                        "it failed",
                        at16,
                        List.of(new PodDownload(
                                "p0", State.FAILED, D, null, "pod p0 step fetch-draft-model exited 4 (Error)")),
                        "Failed",
                        "fetching draft model " + D + " failed: pod p0 step fetch-draft-model exited 4 (Error)"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("draftTransitions")
    void theDraftModelsStepHasItsOwnStatusNamingTheDraft(
            String name, DownloadStatus prev, List<PodDownload> pods, String phase, String message) {
        DownloadStatus next = DownloadProgress.next(prev, pods, T0.plusSeconds(5), DownloadProgress.Step.DRAFT);
        if (phase == null) {
            assertThat(next).isNull();
            return;
        }
        assertThat(next.phase).isEqualTo(phase);
        assertThat(next.message).isEqualTo(message);
        assertThat(next.model).isEqualTo(D);
    }

    @Test
    void theDraftModelsEventsNameItsInitContainer() {
        DownloadStatus a =
                DownloadProgress.next(null, List.of(draftRunning("p0", null)), T0, DownloadProgress.Step.DRAFT);
        assertThat(DownloadProgress.event(null, a, DownloadProgress.Step.DRAFT))
                .containsExactly(
                        "Normal",
                        "DownloadStarted",
                        "fetching draft model " + D + " in 1 pod(s) (init container fetch-draft-model)");
        DownloadStatus done = DownloadProgress.next(
                a, List.of(new PodDownload("p0", State.DONE, D, null, null)), T0, DownloadProgress.Step.DRAFT);
        assertThat(DownloadProgress.event(a, done, DownloadProgress.Step.DRAFT))
                .containsExactly("Normal", "DownloadComplete", "fetched draft model " + D);
    }

    /** A pod rendered with a draft model: fetch-model, then fetch-draft-model; {@code states} per step, null: none. */
    static Pod withDraft(
            io.fabric8.kubernetes.api.model.ContainerState model,
            io.fabric8.kubernetes.api.model.ContainerState draft) {
        Pod p = pod(model, null);
        p.getSpec()
                .getInitContainers()
                .add(new io.fabric8.kubernetes.api.model.ContainerBuilder()
                        .withName("fetch-draft-model")
                        .withArgs("fetch-model", "--source", "hf://" + D, "--dest", "/draft-model/d")
                        .build());
        if (draft != null) {
            p.getStatus()
                    .getInitContainerStatuses()
                    .add(new ContainerStatusBuilder()
                            .withName("fetch-draft-model")
                            .withState(draft)
                            .build());
        }
        return p;
    }

    @Test
    void eachStepIsReadFromItsOwnInitContainer() {
        var running = new ContainerStateBuilder().withNewRunning().endRunning().build();
        var ok = new ContainerStateBuilder()
                .withNewTerminated()
                .withExitCode(0)
                .endTerminated()
                .build();
        var waiting = new ContainerStateBuilder()
                .withNewWaiting()
                .withReason("PodInitializing")
                .endWaiting()
                .build();
        var bad = new ContainerStateBuilder()
                .withNewTerminated()
                .withExitCode(4)
                .withReason("Error")
                .endTerminated()
                .build();
        // the model's step runs, the draft's waits for it
        assertThat(DownloadProgress.observe(withDraft(running, waiting), DownloadProgress.Step.MODEL))
                .isEqualTo(new PodDownload("p0", State.RUNNING, M, null, null));
        assertThat(DownloadProgress.observe(withDraft(running, waiting), DownloadProgress.Step.DRAFT))
                .isEqualTo(new PodDownload("p0", State.NONE, D, null, null));
        // then the draft's runs
        assertThat(DownloadProgress.observe(withDraft(ok, running), DownloadProgress.Step.MODEL)
                        .state())
                .isEqualTo(State.DONE);
        assertThat(DownloadProgress.observe(withDraft(ok, running), DownloadProgress.Step.DRAFT))
                .isEqualTo(new PodDownload("p0", State.RUNNING, D, null, null));
        assertThat(DownloadProgress.observe(withDraft(ok, bad), DownloadProgress.Step.DRAFT)
                        .failure())
                .isEqualTo("pod p0 step fetch-draft-model exited 4 (Error)");
        // a pod without a draft model has no draft step
        assertThat(DownloadProgress.observe(pod(running, null), DownloadProgress.Step.DRAFT)
                        .state())
                .isEqualTo(State.NONE);
    }

    @Test
    void progressingCarriesWhicheverStepRuns() {
        InferenceDeploymentStatus next = new InferenceDeploymentStatus();
        next.conditions =
                List.of(Conditions.next(null, StatusAggregator.PROGRESSING, true, "RollingOut", "rolling out", 3L, T0));
        DownloadStatus model = DownloadProgress.next(
                null, List.of(new PodDownload("p0", State.DONE, M, null, null)), T0, DownloadProgress.Step.MODEL);
        DownloadStatus draft =
                DownloadProgress.next(null, List.of(draftRunning("p0", 400_000_000L)), T0, DownloadProgress.Step.DRAFT);
        InferenceDeploymentStatus s = StatusAggregator.withDownload(null, next, model, draft, T0);
        assertThat(s.download).isNull(); // nothing was downloading before: no Complete out of nowhere
        assertThat(s.draftDownload).isSameAs(draft);
        var c = Conditions.find(s.conditions, StatusAggregator.PROGRESSING).orElseThrow();
        assertThat(c.getReason()).isEqualTo("DownloadingModel");
        assertThat(c.getMessage()).isEqualTo("fetching draft model " + D + ": 0.4 of 2.5 GB (16%)");

        // two pods, one on each step: both, the model's first
        DownloadStatus both = DownloadProgress.next(null, List.of(running("p1", 3_200_000_000L)), T0);
        InferenceDeploymentStatus t = new InferenceDeploymentStatus();
        t.conditions =
                List.of(Conditions.next(null, StatusAggregator.PROGRESSING, true, "RollingOut", "rolling out", 3L, T0));
        t = StatusAggregator.withDownload(null, t, both, draft, T0);
        assertThat(t.download).isSameAs(both);
        assertThat(Conditions.find(t.conditions, StatusAggregator.PROGRESSING)
                        .orElseThrow()
                        .getMessage())
                .isEqualTo("fetching " + M + ": 3.2 of 16.1 GB (19%); fetching draft model " + D
                        + ": 0.4 of 2.5 GB (16%)");

        // neither runs: Progressing keeps its own reason
        InferenceDeploymentStatus u = new InferenceDeploymentStatus();
        u.conditions =
                List.of(Conditions.next(null, StatusAggregator.PROGRESSING, true, "RollingOut", "rolling out", 3L, T0));
        u = StatusAggregator.withDownload(null, u, null, null, T0);
        assertThat(Conditions.find(u.conditions, StatusAggregator.PROGRESSING)
                        .orElseThrow()
                        .getReason())
                .isEqualTo("RollingOut");
    }
}
