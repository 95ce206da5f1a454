package io.tensorlane.operator.rollback;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStateBuilder;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.contract.TerminationMessage;
import io.tensorlane.operator.engine.EngineProfiles;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class FailureDetectorTest {
    static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
    static final String REV = "abc123def0";

    static final String OUR_OOM = TerminationMessage.cudaOom(
                    TerminationMessage.PHASE_IPC_BUFFERS, 25_165_824L, 4_194_304L, 102_641_958_912L, 5, 5, "staging")
            .toJson();
    static final String SGLANG_LOG = """
      [2026-11-29 11:59:01 TP5] Capture cuda graph begin.
      Traceback (most recent call last):
      torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 24.00 MiB. GPU 5 has a total capacity of 95.59 GiB
      [2026-11-29 11:59:02] Received sigquit from a child process.""";
    static final String JAVA_HEAP = "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space";

    static ContainerStatus terminated(String reason, String message, boolean last, boolean crashLooping) {
        var term = new ContainerStateBuilder()
                .withNewTerminated()
                .withReason(reason)
                .withMessage(message)
                .withExitCode(1)
                .withFinishedAt("2026-11-29T11:59:30Z")
                .endTerminated()
                .build();
        var waiting = new ContainerStateBuilder()
                .withNewWaiting()
                .withReason(crashLooping ? "CrashLoopBackOff" : "ContainerCreating")
                .endWaiting()
                .build();
        return new ContainerStatusBuilder()
                .withName("engine")
                .withRestartCount(last ? 3 : 0)
                .withState(last ? waiting : term)
                .withLastState(last ? term : null)
                .build();
    }

    static Pod pod(String name, String rev, ContainerStatus... statuses) {
        return new PodBuilder()
                .withNewMetadata()
                .withName(name)
                .addToLabels("tensorlane.io/revision", rev)
                .endMetadata()
                .withNewStatus()
                .withContainerStatuses(statuses)
                .endStatus()
                .build();
    }

    static Deployment deployment(String rev, String reason) {
        return new DeploymentBuilder()
                .withNewSpec()
                .withNewTemplate()
                .withNewMetadata()
                .addToLabels("tensorlane.io/revision", rev)
                .endMetadata()
                .endTemplate()
                .endSpec()
                .withNewStatus()
                .addNewCondition()
                .withType("Progressing")
                .withStatus(reason == null ? "True" : "False")
                .withReason(reason == null ? "NewReplicaSetAvailable" : reason)
                .withMessage("ReplicaSet \"llama-1\" has timed out progressing.")
                .withLastUpdateTime("2026-11-29T11:58:00Z")
                .endCondition()
                .endStatus()
                .build();
    }

    record Case(
            String name,
            EngineType engine,
            List<Pod> pods,
            Deployment deployment,
            FailureSignal.Kind kind,
            String pod,
            String message) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        EngineType tl = EngineType.Tensorlane;
        EngineType sg = EngineType.SGLang;
        return Stream.of(
                new Case("healthy", tl, List.of(pod("p0", REV)), deployment(REV, null), null, null, null),
                new Case(
                        "our runtime's JSON CUDA-OOM message",
                        tl,
                        List.of(pod("p0", REV, terminated("Error", OUR_OOM, true, true))),
                        null,
                        FailureSignal.Kind.CudaOutOfMemory,
                        "p0",
                        "CUDA out of memory in phase ipc-buffers allocating staging"),
                new Case(
                        "the runtime's JSON in an SGLang pod (its download step)",
                        sg,
                        List.of(pod("p0", REV, terminated("Error", OUR_OOM, true, true))),
                        null,
                        FailureSignal.Kind.CudaOutOfMemory,
                        "p0",
                        "CUDA out of memory in phase ipc-buffers"),
                new Case(
                        "SGLang log line via FallbackToLogsOnError",
                        sg,
                        List.of(pod("p0", REV, terminated("Error", SGLANG_LOG, false, false))),
                        null,
                        FailureSignal.Kind.CudaOutOfMemory,
                        "p0",
                        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 24.00 MiB"),
                new Case(
                        "host OOMKilled in lastState",
                        tl,
                        List.of(pod("p0", REV, terminated("OOMKilled", null, true, false))),
                        null,
                        FailureSignal.Kind.OOMKilled,
                        "p0",
                        "OOMKilled (host memory)"),
                new Case(
                        "CUDA OOM wins over CrashLoopBackOff on another pod",
                        tl,
                        List.of(
                                pod("p0", REV, terminated("Error", "boom", true, true)),
                                pod("p1", REV, terminated("Error", OUR_OOM, true, true))),
                        null,
                        FailureSignal.Kind.CudaOutOfMemory,
                        "p1",
                        "ipc-buffers"),
                new Case(
                        "CrashLoopBackOff without OOM",
                        tl,
                        List.of(pod("p0", REV, terminated("Error", "segfault", true, true))),
                        null,
                        FailureSignal.Kind.CrashLoopBackOff,
                        "p0",
                        "restarted 3 times: last exit code 1 (Error)"),
                new Case(
                        "a Java heap OOM is not a CUDA OOM, even among PyTorch's markers",
                        sg,
                        List.of(pod("p0", REV, terminated("Error", JAVA_HEAP, true, true))),
                        null,
                        FailureSignal.Kind.CrashLoopBackOff,
                        "p0",
                        "restarted"),
                new Case(
                        "pods of another revision are ignored",
                        tl,
                        List.of(pod("p0", "old", terminated("OOMKilled", OUR_OOM, true, true))),
                        deployment(REV, null),
                        null,
                        null,
                        null),
                new Case(
                        "progress deadline",
                        tl,
                        List.of(pod("p0", REV)),
                        deployment(REV, "ProgressDeadlineExceeded"),
                        FailureSignal.Kind.ProgressDeadlineExceeded,
                        null,
                        "timed out progressing"),
                new Case(
                        "progress deadline of an older template is ignored",
                        tl,
                        List.of(),
                        deployment("old", "ProgressDeadlineExceeded"),
                        null,
                        null,
                        null),
                new Case(
                        "JSON that is not ours falls back to the line match",
                        sg,
                        List.of(pod(
                                "p0",
                                REV,
                                terminated(
                                        "Error",
                                        "{\"level\":\"error\",\"msg\":\"CUDA out of memory\"}",
                                        false,
                                        false))),
                        null,
                        FailureSignal.Kind.CudaOutOfMemory,
                        "p0",
                        "CUDA out of memory"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void detects(Case c) {
        Optional<FailureSignal> f =
                FailureDetector.detect(c.pods(), REV, c.deployment(), EngineProfiles.of(c.engine()), NOW);

        if (c.kind() == null) {
            assertThat(f).isEmpty();
            return;
        }
        assertThat(f).isPresent();
        assertThat(f.get().kind()).isEqualTo(c.kind());
        assertThat(f.get().pod()).isEqualTo(c.pod());
        assertThat(f.get().revision()).isEqualTo(REV);
        assertThat(f.get().message()).contains(c.message());
        assertThat(f.get().toRecord().reason).isEqualTo(c.kind().name());
    }

    static Pod ready(String name, String rev, String status, String since) {
        return new PodBuilder(pod(name, rev))
                .editStatus()
                .addNewCondition()
                .withType("Ready")
                .withStatus(status)
                .withLastTransitionTime(since)
                .endCondition()
                .endStatus()
                .build();
    }

    @Test
    void allReadySinceIsTheLatestReadyTransitionWhenEveryReplicaIsReady() {
        List<Pod> pods = List.of(
                ready("a", REV, "True", "2026-11-29T11:50:00Z"),
                ready("b", REV, "True", "2026-11-29T11:55:00Z"),
                ready("old", "old", "False", "2026-11-29T11:40:00Z"));

        assertThat(FailureDetector.allReadySince(pods, REV, 2)).contains(Instant.parse("2026-11-29T11:55:00Z"));
        assertThat(FailureDetector.allReadySince(pods, REV, 3)).isEmpty();
        assertThat(FailureDetector.allReadySince(
                        List.of(
                                ready("a", REV, "True", "2026-11-29T11:50:00Z"),
                                ready("b", REV, "False", "2026-11-29T11:55:00Z")),
                        REV,
                        2))
                .isEmpty();
    }
}
