package io.tensorlane.operator.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Fixtures;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The preflight Job's shape and name (pure). */
class PreflightJobsTest {
    static final TensorlaneConfig S = TestConfig.defaults();

    static InferenceDeployment owner(String name) {
        InferenceDeployment d = new InferenceDeployment();
        d.getMetadata().setName(name);
        d.getMetadata().setNamespace("llm");
        d.getMetadata().setUid("uid-1");
        d.setSpec(Fixtures.llama70b(8));
        d.getSpec()
                .placement
                .tolerations
                .add(new TolerationBuilder()
                        .withKey("dedicated")
                        .withValue("llm")
                        .withEffect("NoSchedule")
                        .build());
        return d;
    }

    @Test
    void neverHangsAndRunsOnExactlyThatNode() {
        Job job = PreflightJobs.job(owner("llama"), "gpu-node-7", 8, S);
        assertThat(job.getSpec().getBackoffLimit()).isZero();
        assertThat(job.getSpec().getActiveDeadlineSeconds()).isEqualTo(300);
        assertThat(job.getSpec().getTtlSecondsAfterFinished()).isEqualTo(3600);
        assertThat(job.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getUid()).isEqualTo("uid-1");
            assertThat(o.getController()).isTrue();
        });
        var pod = job.getSpec().getTemplate().getSpec();
        assertThat(pod.getRestartPolicy()).isEqualTo("Never");
        var term = pod.getAffinity()
                .getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution()
                .getNodeSelectorTerms()
                .get(0)
                .getMatchFields()
                .get(0);
        assertThat(term.getKey()).isEqualTo("metadata.name");
        assertThat(term.getValues()).containsExactly("gpu-node-7");
        assertThat(pod.getTolerations()).extracting(t -> t.getKey()).containsExactly("dedicated", "nvidia.com/gpu");
        assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
        var c = pod.getContainers().get(0);
        assertThat(c.getImage()).isEqualTo("tensorlane/tensorlane-runtime:0.1.0");
        assertThat(c.getArgs())
                .containsExactly(
                        "preflight", "--world-size", "8", "--bench-max-bytes", "8388608", "--timeout-seconds", "270");
        assertThat(c.getResources().getLimits()).containsEntry("nvidia.com/gpu", new Quantity("8"));
        assertThat(c.getTerminationMessagePolicy()).isEqualTo("FallbackToLogsOnError");
        assertThat(job.getMetadata().getAnnotations()).containsEntry(PreflightJobs.NODE_ANNOTATION, "gpu-node-7");
    }

    @Test
    void theUsersEngineImageAndASmallerMaxMessageAreUsed() {
        InferenceDeployment d = owner("llama");
        d.getSpec().engine.image = "registry.example/tensorlane-runtime:dev";
        d.getSpec().allreduce.maxMessageBytes = 1L << 20;
        var c = PreflightJobs.job(
                        d,
                        "n",
                        4,
                        TestConfig.with("tensorlane.preflight.deadline", "60s", "tensorlane.preflight.grace", "5s"))
                .getSpec()
                .getTemplate()
                .getSpec()
                .getContainers()
                .get(0);
        assertThat(c.getImage()).isEqualTo("registry.example/tensorlane-runtime:dev");
        assertThat(c.getArgs())
                .containsSequence("--bench-max-bytes", "1048576")
                .containsSequence("--timeout-seconds", "54");
    }

    static Stream<Arguments> names() {
        return Stream.of(
                Arguments.of("llama", "node-a", 8),
                Arguments.of("x".repeat(200), "n".repeat(250), 8),
                Arguments.of("ends-with-dash-".repeat(3), "node-a", 2));
    }

    @ParameterizedTest
    @MethodSource("names")
    void namesFitTheJobNameLabelAndDifferPerNodeAndWorldSize(String deployment, String node, int world) {
        String name = PreflightJobs.name(deployment, node, world);
        assertThat(name).hasSizeLessThanOrEqualTo(63).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
        assertThat(PreflightJobs.name(deployment, node + "x", world)).isNotEqualTo(name);
        assertThat(PreflightJobs.name(deployment, node, world + 1)).isNotEqualTo(name);
    }

    @Test
    void recognisesItsOwnPreflightPods() {
        var labels = PreflightJobs.job(owner("llama"), "n", 8, S)
                .getSpec()
                .getTemplate()
                .getMetadata()
                .getLabels();
        var pod = new PodBuilder()
                .withNewMetadata()
                .withNamespace("llm")
                .withLabels(labels)
                .endMetadata()
                .build();
        assertThat(PreflightJobs.isPreflightPodOf(pod, "llm", "llama")).isTrue();
        assertThat(PreflightJobs.isPreflightPodOf(pod, "llm", "other")).isFalse();
        assertThat(PreflightJobs.isPreflightPodOf(pod, "prod", "llama")).isFalse();
        assertThat(PreflightJobs.isPreflightPodOf(
                        new PodBuilder()
                                .withNewMetadata()
                                .withNamespace("llm")
                                .withLabels(Map.of("app", "x"))
                                .endMetadata()
                                .build(),
                        "llm",
                        "llama"))
                .isFalse();
    }
}
