package io.tensorlane.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.tensorlane.api.v1alpha1.DownloadStatus;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.contract.FetchProgress;
import io.tensorlane.operator.model.DownloadProgress.PodDownload;
import io.tensorlane.operator.model.DownloadProgress.State;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The download step in status: when it changes (10% steps, 30 s), what it says, and one event per transition. */
class DownloadProgressTest {
    static final String M = "org/m@2222222222222222222222222222222222222222";
    static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");
    static final long GB = 1_000_000_000L;

    static PodDownload running(String pod, Long done) {
        return new PodDownload(
                pod,
                State.RUNNING,
                M,
                done == null ? null : new FetchProgress(M, FetchProgress.RUNNING, done, 16_100_000_000L, 1, 4),
                null);
    }

    static DownloadStatus downloading(int percent, long done, int pods, Instant at) {
        DownloadStatus d = DownloadProgress.next(
                null,
                java.util.stream.IntStream.range(0, pods)
                        .mapToObj(i -> running("p" + i, done))
                        .toList(),
                at);
        assertThat(d.percent).isEqualTo(percent);
        return d;
    }

    /** prev, pods, seconds after prev, expected: "same" (no write), or the phase and message of the new status. */
    static Stream<Arguments> transitions() {
        DownloadStatus at20 = downloading(20, 3_300_000_000L, 1, T0);
        return Stream.of(
                Arguments.of("nothing runs, nothing known", null, List.of(), 0, null, null),
                Arguments.of(
                        "a step starts, no log line yet",
                        null,
                        List.of(running("p0", null)),
                        0,
                        "Downloading",
                        "fetching " + M + ": starting"),
                Arguments.of(
                        "first progress",
                        null,
                        List.of(running("p0", 3_200_000_000L)),
                        0,
                        "Downloading",
                        "fetching " + M + ": 3.2 of 16.1 GB (19%)"),
                Arguments.of(
                        "same 10% step within 30 s: no write",
                        at20, List.of(running("p0", 3_400_000_000L)), 10, "same", null),
                Arguments.of(
                        "same 10% step after 30 s: a write",
                        at20,
                        List.of(running("p0", 3_400_000_000L)),
                        30,
                        "Downloading",
                        "fetching " + M + ": 3.4 of 16.1 GB (21%)"),
                Arguments.of(
                        "next 10% step: a write at once",
                        at20,
                        List.of(running("p0", 5 * GB)),
                        5,
                        "Downloading",
                        "fetching " + M + ": 5.0 of 16.1 GB (31%)"),
                Arguments.of(
                        "a second pod starts: the slowest shows",
                        at20,
                        List.of(running("p0", 5 * GB), running("p1", null)),
                        5,
                        "Downloading",
                        "fetching " + M + ": starting (slowest of 2 pods)"),
                Arguments.of(
                        "the step ended",
                        at20,
                        List.of(new PodDownload("p0", State.DONE, M, null, null)),
                        5,
                        "Complete",
                        "fetched " + M + " (16.1 of 16.1 GB)"),
                Arguments.of(
                        "the step failed",
                        at20,
                        List.of(new PodDownload(
                                "p0",
                                State.FAILED,
                                M,
                                null,
                                "pod p0 step fetch-model exited 4 (Error): ModelNotFound")),
                        5,
                        "Failed",
                        "fetching " + M + " failed: pod p0 step fetch-model exited 4 (Error): ModelNotFound"),
                Arguments.of("the downloading pod went away", at20, List.of(), 5, null, null),
                Arguments.of(
                        "complete stays as it is",
                        DownloadProgress.next(at20, List.of(new PodDownload("p0", State.DONE, M, null, null)), T0),
                        List.of(new PodDownload("p0", State.DONE, M, null, null)),
                        600,
                        "same",
                        null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("transitions")
    void statusChangesOnlyWhenItIsWorthAWrite(
            String name, DownloadStatus prev, List<PodDownload> pods, int secs, String phase, String message) {
        DownloadStatus next = DownloadProgress.next(prev, pods, T0.plusSeconds(secs));
        if ("same".equals(phase)) {
            assertThat(next).isSameAs(prev);
            return;
        }
        if (phase == null) {
            assertThat(next).isNull();
            return;
        }
        assertThat(next).isNotSameAs(prev);
        assertThat(next.phase).isEqualTo(phase);
        assertThat(next.message).isEqualTo(message);
        assertThat(next.updatedAt).isEqualTo(T0.plusSeconds(secs).toString());
    }

    @Test
    void aWholeDownloadPolledEverySecondWritesAboutOncePerTenPercent() {
        DownloadStatus d = null;
        int writes = 0;
        long total = 16_100_000_000L;
        for (int s = 0; s <= 200; s++) { // 80.5 MB/s: 200 s, polled every second
            long done = Math.min(total, s * total / 200);
            DownloadStatus n = DownloadProgress.next(
                    d,
                    List.of(new PodDownload(
                            "p0",
                            State.RUNNING,
                            M,
                            new FetchProgress(M, FetchProgress.RUNNING, done, total, 0, 4),
                            null)),
                    T0.plusSeconds(s));
            writes += n != d ? 1 : 0;
            d = n;
        }
        assertThat(writes).isBetween(10, 12); // one per 10% step, the first line and 100%
        DownloadStatus end = DownloadProgress.next(
                d, List.of(new PodDownload("p0", State.DONE, M, null, null)), T0.plusSeconds(201));
        assertThat(end.phase).isEqualTo("Complete");
        assertThat(DownloadProgress.event(d, end))
                .containsExactly("Normal", "DownloadComplete", "fetched " + M + " (16.1 of 16.1 GB)");
    }

    @Test
    void oneEventPerTransition() {
        DownloadStatus a = DownloadProgress.next(null, List.of(running("p0", null)), T0);
        DownloadStatus b = DownloadProgress.next(a, List.of(running("p0", 9 * GB)), T0.plusSeconds(5));
        DownloadStatus f = DownloadProgress.next(b, List.of(new PodDownload("p0", State.FAILED, M, null, "boom")), T0);
        assertThat(DownloadProgress.event(null, a))
                .containsExactly(
                        "Normal", "DownloadStarted", "fetching " + M + " in 1 pod(s) (init container fetch-model)");
        assertThat(DownloadProgress.event(a, b)).as("progress is no event").isNull();
        assertThat(DownloadProgress.event(b, f)[1]).isEqualTo("DownloadFailed");
        assertThat(DownloadProgress.event(b, null)).isNull();
        assertThat(DownloadProgress.event(f, DownloadProgress.next(f, List.of(running("p0", null)), T0))[1])
                .as("a retry starts again")
                .isEqualTo("DownloadStarted");
    }

    @Test
    void progressingCarriesTheDownloadWhileItRuns() {
        InferenceDeploymentStatus next = new InferenceDeploymentStatus();
        next.conditions = List.of(
                Conditions.next(null, StatusAggregator.PROGRESSING, true, "RollingOut", "rolling out", 3L, T0),
                Conditions.next(null, StatusAggregator.READY, false, "Progressing", "0/1", 3L, T0));
        DownloadStatus d = DownloadProgress.next(null, List.of(running("p0", 3_200_000_000L)), T0);
        InferenceDeploymentStatus s = StatusAggregator.withDownload(null, next, d, T0);
        var c = Conditions.find(s.conditions, StatusAggregator.PROGRESSING).orElseThrow();
        assertThat(c.getReason()).isEqualTo("DownloadingModel");
        assertThat(c.getMessage()).isEqualTo("fetching " + M + ": 3.2 of 16.1 GB (19%)");
        assertThat(c.getObservedGeneration()).isEqualTo(3L);
        assertThat(s.download).isSameAs(d);
        assertThat(s.conditions).hasSize(2);
    }

    static Pod pod(
            io.fabric8.kubernetes.api.model.ContainerState state, io.fabric8.kubernetes.api.model.ContainerState last) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("p0")
                .withUid("u")
                .endMetadata()
                .withNewSpec()
                .addNewInitContainer()
                .withName("fetch-model")
                .withArgs("fetch-model", "--source", "hf://" + M, "--dest", "/m")
                .endInitContainer()
                .endSpec()
                .withNewStatus()
                .addToInitContainerStatuses(new ContainerStatusBuilder()
                        .withName("fetch-model")
                        .withState(state)
                        .withLastState(last)
                        .build())
                .endStatus()
                .build();
    }

    @Test
    void thePodStatusSaysWhereTheStepStands() {
        var running = new ContainerStateBuilder().withNewRunning().endRunning().build();
        var ok = new ContainerStateBuilder()
                .withNewTerminated()
                .withExitCode(0)
                .endTerminated()
                .build();
        var bad = new ContainerStateBuilder()
                .withNewTerminated()
                .withExitCode(5)
                .withReason("Error")
                .withMessage("{\"reason\":\"ModelUnauthorized\"}")
                .endTerminated()
                .build();
        var backoff = new ContainerStateBuilder()
                .withNewWaiting()
                .withReason("CrashLoopBackOff")
                .endWaiting()
                .build();
        assertThat(DownloadProgress.observe(pod(running, null)))
                .isEqualTo(new PodDownload("p0", State.RUNNING, M, null, null));
        assertThat(DownloadProgress.observe(pod(ok, null)).state()).isEqualTo(State.DONE);
        assertThat(DownloadProgress.observe(pod(bad, null)).failure())
                .isEqualTo("pod p0 step fetch-model exited 5 (Error): {\"reason\":\"ModelUnauthorized\"}");
        assertThat(DownloadProgress.observe(pod(backoff, bad)).state()).isEqualTo(State.FAILED);
        Pod none = new PodBuilder()
                .withNewMetadata()
                .withName("p0")
                .endMetadata()
                .withNewSpec()
                .endSpec()
                .build();
        assertThat(DownloadProgress.observe(none).state()).isEqualTo(State.NONE);
    }
}
