package io.tensorlane.operator.model;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Fixtures;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The inspection Job and how its termination message becomes status.model or a ModelUnavailable reason. */
class InspectionJobsTest {
    static final ModelSource SRC = ModelSource.parse("pvc://models/llama");
    static final Job JOB = new JobBuilder()
            .withNewMetadata()
            .withName("tensorlane-inspect-x")
            .endMetadata()
            .build();
    static final String FACTS =
            "{\"source\":\"whatever\",\"revision\":\"sha256:00\",\"architecture\":\"LlamaForCausalLM\","
                    + "\"geometry\":{\"layers\":2,\"hiddenSize\":64,\"attentionHeads\":4,\"kvHeads\":2},\"weightBytes\":1024}";

    static Pod terminated(int exit, String message) {
        return new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .endMetadata()
                .withNewStatus()
                .addNewContainerStatus()
                .withName(InspectionJobs.CONTAINER)
                .withNewState()
                .withNewTerminated()
                .withExitCode(exit)
                .withMessage(message)
                .withReason(exit == 0 ? "Completed" : "Error")
                .withFinishedAt("2026-11-29T12:00:00Z")
                .endTerminated()
                .endState()
                .endContainerStatus()
                .endStatus()
                .build();
    }

    static Stream<Arguments> cases() {
        Job deadline = new JobBuilder(JOB)
                .withNewStatus()
                .addNewCondition()
                .withType("Failed")
                .withStatus("True")
                .withReason("DeadlineExceeded")
                .withMessage("Job was active longer than specified deadline")
                .withLastTransitionTime("2026-11-29T12:05:00Z")
                .endCondition()
                .endStatus()
                .build();
        return Stream.of(
                Arguments.of("running", JOB, List.of(), null, null),
                Arguments.of("facts", JOB, List.of(terminated(0, FACTS)), "KNOWN", null),
                Arguments.of("unreadable facts", JOB, List.of(terminated(0, "{oops")), "FAILED", "InvalidModel"),
                Arguments.of(
                        "facts without geometry",
                        JOB,
                        List.of(terminated(0, "{\"architecture\":\"X\"}")),
                        "FAILED",
                        "InvalidModel"),
                Arguments.of(
                        "unsupported",
                        JOB,
                        List.of(terminated(2, "UnsupportedArchitecture: arch X is not supported")),
                        "FAILED",
                        "UnsupportedArchitecture"),
                Arguments.of(
                        "crash without message", JOB, List.of(terminated(137, null)), "FAILED", "InspectionFailed"),
                Arguments.of("deadline", deadline, List.of(), "FAILED", "InspectionFailed"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void resultOfTheJob(String name, Job job, List<Pod> pods, String state, String reason) {
        Optional<ModelResolution> r = InspectionJobs.result(SRC, job, pods);
        if (state == null) {
            assertThat(r).isEmpty();
            return;
        }
        assertThat(r).get().satisfies(m -> {
            assertThat(m.state().name()).isEqualTo(state);
            assertThat(m.reason()).isEqualTo(reason);
            if (m.state() == ModelResolution.State.KNOWN) {
                assertThat(m.status().source)
                        .as("the source as the spec names it")
                        .isEqualTo("pvc://models/llama");
                assertThat(m.status().weightBytes).isEqualTo(1024);
            } else {
                assertThat(m.message()).isNotBlank();
            }
        });
    }

    @Test
    void messagesSayWhy() {
        assertThat(InspectionJobs.result(
                                SRC, JOB, List.of(terminated(2, "UnsupportedArchitecture: arch X is not supported")))
                        .orElseThrow()
                        .message())
                .isEqualTo("arch X is not supported");
        assertThat(InspectionJobs.result(SRC, JOB, List.of(terminated(137, null)))
                        .orElseThrow()
                        .message())
                .isEqualTo("inspect-model exited 137 in Job tensorlane-inspect-x (Error)");
    }

    @Test
    void theJobMountsTheSourceReadOnlyWithoutGpusAndRunsInspectModel() {
        InferenceDeployment owner = new InferenceDeployment();
        owner.setMetadata(new ObjectMetaBuilder()
                .withName("llama")
                .withNamespace("ml")
                .withUid("u1")
                .build());
        var spec = io.tensorlane.operator.plan.SpecValidator.withDefaults(
                Fixtures.with(Fixtures.llama8b(2), s -> s.model.source = SRC.uri()));
        Job j = InspectionJobs.job(owner, spec, SRC, TestConfig.defaults());
        assertThat(j.getMetadata().getName())
                .isEqualTo(InspectionJobs.name(SRC))
                .startsWith("tensorlane-inspect-");
        assertThat(j.getMetadata().getOwnerReferences())
                .singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo("u1"));
        assertThat(j.getSpec().getBackoffLimit()).isZero();
        var pod = j.getSpec().getTemplate().getSpec();
        assertThat(pod.getRestartPolicy()).isEqualTo("Never");
        var c = pod.getContainers().get(0);
        assertThat(c.getImage()).isEqualTo("tensorlane/tensorlane-runtime:0.1.0");
        assertThat(c.getArgs())
                .containsExactly("inspect-model", "--dir", "/models/llama", "--source", "pvc://models/llama");
        assertThat(c.getResources().getLimits()).containsOnlyKeys("memory");
        assertThat(c.getVolumeMounts())
                .anySatisfy(m -> assertThat(m.getReadOnly()).isTrue());
        assertThat(pod.getVolumes())
                .anySatisfy(v ->
                        assertThat(v.getPersistentVolumeClaim().getReadOnly()).isTrue());
    }
}
