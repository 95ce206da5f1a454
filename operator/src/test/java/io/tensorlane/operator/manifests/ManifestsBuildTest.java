package io.tensorlane.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The kustomize tree builds with the machine's kubectl and says what the install promises. No cluster needed. */
class ManifestsBuildTest {
    /** API versions a 1.20 API server serves for the kinds we ship (no policy/v1, no batch/v1 CronJob...). */
    static final Set<String> SERVED_BY_1_20 = Set.of(
            "v1",
            "apps/v1",
            "rbac.authorization.k8s.io/v1",
            "coordination.k8s.io/v1",
            "apiextensions.k8s.io/v1",
            "policy/v1beta1",
            "tensorlane.io/v1alpha1");

    static final String OPERATOR = "tensorlane-operator";
    static final String PROBE = "tensorlane-probe";

    @ParameterizedTest
    @ValueSource(
            strings = {
                "manifests",
                "manifests/base",
                "manifests/overlays/dev",
                "manifests/overlays/prod",
                "manifests/samples",
                "manifests/argocd",
                "manifests/crds",
                "manifests/rbac",
                "manifests/probe"
            })
    void builds(String dir) {
        assertThat(Manifests.kustomize(dir)).as("objects built from %s", dir).isNotEmpty();
    }

    @Test
    void devUsesOnlyApiVersionsThe120ServerServes() {
        assertThat(Manifests.kustomize("manifests/overlays/dev"))
                .extracting(HasMetadata::getApiVersion)
                .allSatisfy(v -> assertThat(SERVED_BY_1_20).contains(v));
    }

    @Test
    void prodAddsOnlyThePdbAsPolicyV1() {
        List<HasMetadata> prod = Manifests.kustomize("manifests/overlays/prod");
        assertThat(prod.stream().filter(o -> !SERVED_BY_1_20.contains(o.getApiVersion())))
                .extracting(o -> o.getApiVersion() + " " + o.getKind())
                .containsExactly("policy/v1 PodDisruptionBudget");
    }

    static Stream<Arguments> imagesInTheBase() {
        return Stream.of(Arguments.of(OPERATOR), Arguments.of("tensorlane-runtime"));
    }

    @SuppressWarnings("unchecked")
    @ParameterizedTest
    @MethodSource("imagesInTheBase")
    void baseImagesAreThePomsImageNamesAndTag(String image) {
        String registry = Manifests.pomProperty("tensorlane.image.registry");
        String tag = Manifests.pomProperty("tensorlane.image.tag");
        List<Map<String, Object>> images = (List<Map<String, Object>>)
                Manifests.yamlFile("manifests/base/kustomization.yaml").get("images");
        assertThat(images)
                .filteredOn(i -> image.equals(i.get("name")))
                .singleElement()
                .satisfies(i -> {
                    assertThat(i.get("newName")).as("newName of %s", image).isEqualTo(registry + "/" + image);
                    assertThat(String.valueOf(i.get("newTag")))
                            .as("newTag of %s", image)
                            .isEqualTo(tag);
                });
    }

    @Test
    void operatorsRuntimeImageDefaultIsThePomsRuntimeImage() {
        // the operator's compiled-in default (TensorlaneConfig's @WithDefault) must not drift from the one place image
        // names are set
        assertThat(io.tensorlane.operator.TestConfig.defaults().runtimeImage())
                .isEqualTo(Manifests.pomProperty("tensorlane.image.registry") + "/tensorlane-runtime:"
                        + Manifests.pomProperty("tensorlane.image.tag"));
    }

    @Test
    void operatorRuntimeImageDefaultIsTheDeployedRuntimeImage() {
        List<HasMetadata> base = Manifests.kustomize("manifests/base");
        String expected = Manifests.pomProperty("tensorlane.image.registry") + "/tensorlane-runtime:"
                + Manifests.pomProperty("tensorlane.image.tag");
        Container probe = container(Manifests.one(base, DaemonSet.class, PROBE)
                .getSpec()
                .getTemplate()
                .getSpec());
        Container operator = container(Manifests.one(base, Deployment.class, OPERATOR)
                .getSpec()
                .getTemplate()
                .getSpec());
        assertThat(probe.getImage()).isEqualTo(expected);
        assertThat(env(operator, "TENSORLANE_RUNTIME_IMAGE")).isEqualTo(expected);
        assertThat(operator.getImage())
                .isEqualTo(Manifests.pomProperty("tensorlane.image.registry") + "/" + OPERATOR + ":"
                        + Manifests.pomProperty("tensorlane.image.tag"));
    }

    @Test
    void prodOperatorIsHighlyAvailableAndHardened() {
        List<HasMetadata> prod = Manifests.kustomize("manifests/overlays/prod");
        Deployment d = Manifests.one(prod, Deployment.class, OPERATOR);
        assertThat(d.getSpec().getReplicas()).isEqualTo(2);
        assertThat(env(container(d.getSpec().getTemplate().getSpec()), "QUARKUS_PROFILE"))
                .as("prod profile (leader election is active for it)")
                .isNull();
        PodSpec pod = d.getSpec().getTemplate().getSpec();
        assertHardened(pod, OPERATOR);
        Container c = container(pod);
        assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/q/health/live");
        assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/q/health/ready");
        assertThat(c.getResources().getRequests()).containsKeys("cpu", "memory");
        assertThat(c.getResources().getLimits()).containsKeys("cpu", "memory");
        assertThat(Manifests.all(prod, ServiceAccount.class))
                .extracting(sa -> sa.getMetadata().getName())
                .contains(pod.getServiceAccountName());
    }

    @Test
    void devOperatorIsOneReplicaWithoutLeaderElectionAndDebugLogging() {
        Deployment d = Manifests.one(Manifests.kustomize("manifests/overlays/dev"), Deployment.class, OPERATOR);
        assertThat(d.getSpec().getReplicas()).isEqualTo(1);
        Container c = container(d.getSpec().getTemplate().getSpec());
        assertThat(env(c, "QUARKUS_PROFILE")).isNotNull().isNotEqualTo("prod");
        assertThat(env(c, "QUARKUS_LOG_CATEGORY__IO_TENSORLANE__LEVEL")).isEqualTo("DEBUG");
        assertThat(c.getImagePullPolicy()).isEqualTo("Never");
        assertHardened(d.getSpec().getTemplate().getSpec(), OPERATOR);
    }

    @Test
    void probeDaemonSetRunsThePublishingProbeOnGpuNodesWithLeastPrivilege() {
        List<HasMetadata> base = Manifests.kustomize("manifests/base");
        DaemonSet ds = Manifests.one(base, DaemonSet.class, PROBE);
        PodSpec pod = ds.getSpec().getTemplate().getSpec();
        assertHardened(pod, PROBE);
        assertThat(pod.getServiceAccountName()).isEqualTo(PROBE);
        assertThat(pod.getHostNetwork()).isNotEqualTo(Boolean.TRUE);
        assertThat(pod.getHostPID()).isNotEqualTo(Boolean.TRUE);
        assertThat(pod.getVolumes())
                .allSatisfy(v ->
                        assertThat(v.getHostPath()).as("volume %s", v.getName()).isNull());
        Container c = container(pod);
        assertThat(c.getArgs()).startsWith("probe").contains("--publish").anyMatch(a -> a.startsWith("--interval="));
        assertThat(c.getEnv())
                .filteredOn(e -> "NODE_NAME".equals(e.getName()))
                .singleElement()
                .satisfies(e -> assertThat(e.getValueFrom().getFieldRef().getFieldPath())
                        .isEqualTo("spec.nodeName"));
        assertThat(c.getResources().getRequests()).doesNotContainKey("nvidia.com/gpu");
        assertThat(pod.getAffinity()
                        .getNodeAffinity()
                        .getRequiredDuringSchedulingIgnoredDuringExecution()
                        .getNodeSelectorTerms())
                .flatExtracting(t -> t.getMatchExpressions())
                .extracting(e -> e.getKey())
                .contains("nvidia.com/gpu.present");

        ClusterRoleBinding binding = Manifests.one(base, ClusterRoleBinding.class, PROBE);
        assertThat(binding.getRoleRef().getName()).isEqualTo(PROBE);
        assertThat(binding.getSubjects()).singleElement().satisfies(s -> {
            assertThat(s.getKind()).isEqualTo("ServiceAccount");
            assertThat(s.getName()).isEqualTo(PROBE);
            assertThat(s.getNamespace()).isEqualTo(ds.getMetadata().getNamespace());
        });
        List<PolicyRule> rules = Manifests.one(base, ClusterRole.class, PROBE).getRules();
        assertThat(rules).isNotEmpty().allSatisfy(r -> {
            assertThat(r.getApiGroups()).containsOnly("tensorlane.io");
            assertThat(r.getResources()).isSubsetOf("gputopologies", "gputopologies/status");
            assertThat(r.getVerbs()).isSubsetOf("get", "create", "patch", "update");
            assertThat(r.getResourceNames()).isNullOrEmpty();
        });
    }

    static void assertHardened(PodSpec pod, String what) {
        assertThat(pod.getSecurityContext().getRunAsNonRoot())
                .as("%s runAsNonRoot", what)
                .isTrue();
        assertThat(pod.getSecurityContext().getSeccompProfile().getType())
                .as("%s seccomp", what)
                .isEqualTo("RuntimeDefault");
        for (Container c : pod.getContainers()) {
            var sc = c.getSecurityContext();
            assertThat(sc.getAllowPrivilegeEscalation())
                    .as("%s allowPrivilegeEscalation", what)
                    .isFalse();
            assertThat(sc.getReadOnlyRootFilesystem())
                    .as("%s readOnlyRootFilesystem", what)
                    .isTrue();
            assertThat(sc.getPrivileged()).as("%s privileged", what).isNotEqualTo(Boolean.TRUE);
            assertThat(sc.getCapabilities().getDrop())
                    .as("%s capabilities", what)
                    .containsExactly("ALL");
            assertThat(sc.getCapabilities().getAdd())
                    .as("%s added capabilities", what)
                    .isNullOrEmpty();
            assertThat(c.getVolumeMounts())
                    .as("%s writable /tmp", what)
                    .anyMatch(m -> "/tmp".equals(m.getMountPath())
                            && pod.getVolumes().stream()
                                    .anyMatch(v -> v.getName().equals(m.getName()) && v.getEmptyDir() != null));
        }
    }

    static Container container(PodSpec pod) {
        assertThat(pod.getContainers()).hasSize(1);
        return pod.getContainers().get(0);
    }

    static String env(Container c, String name) {
        return c.getEnv().stream()
                .filter(e -> name.equals(e.getName()))
                .map(EnvVar::getValue)
                .findFirst()
                .orElse(null);
    }
}
