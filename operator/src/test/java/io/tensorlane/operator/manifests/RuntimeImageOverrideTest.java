package io.tensorlane.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.model.InspectionJobs;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.plan.SpecValidator;
import io.tensorlane.operator.preflight.PreflightJobs;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.topology.TopologyFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A user's kustomize overlay that moves the runtime image ({@code images:}, as manifests/README.md tells) reaches the
 * pods the operator renders: the real `kubectl kustomize` builds the overlay on top of overlays/prod or overlays/dev,
 * the operator Deployment's plain environment is fed to the operator's configuration through SmallRye's environment
 * source (Quarkus' mapping: TENSORLANE_RUNTIME_IMAGE is tensorlane.runtime-image), and the engine pod, its model
 * download step, the preflight Job and the inspection Job are rendered from that configuration.
 */
class RuntimeImageOverrideTest {
    static final String DIGEST = "sha256:" + "0123456789abcdef".repeat(4);

    static Stream<Arguments> overrides() {
        return Stream.of(
                Arguments.of(
                        "prod",
                        "newName: registry.example.com/ml/tensorlane-runtime, newTag: \"0.2.0\"",
                        "registry.example.com/ml/tensorlane-runtime:0.2.0"),
                Arguments.of("dev", "newTag: dev-7", "tensorlane/tensorlane-runtime:dev-7"),
                Arguments.of(
                        "prod",
                        "newName: mirror.local:5000/tl/runtime, digest: " + DIGEST,
                        "mirror.local:5000/tl/runtime@" + DIGEST));
    }

    @ParameterizedTest(name = "overlays/{0} + images: [{1}]")
    @MethodSource("overrides")
    void theOverlaysRuntimeImageReachesEngineAndPreflightPods(String overlay, String entry, String expected)
            throws IOException {
        List<HasMetadata> built = Manifests.kustomize(userOverlay(overlay, entry));
        List<HasMetadata> plain = Manifests.kustomize("manifests/overlays/" + overlay);

        // the manifests: the probe and the operator's TENSORLANE_RUNTIME_IMAGE move together, nothing else changes
        Container probe = only(Manifests.one(built, DaemonSet.class, "tensorlane-probe")
                .getSpec()
                .getTemplate()
                .getSpec());
        Container operator = only(Manifests.one(built, Deployment.class, "tensorlane-operator")
                .getSpec()
                .getTemplate()
                .getSpec());
        Container operatorBefore = only(Manifests.one(plain, Deployment.class, "tensorlane-operator")
                .getSpec()
                .getTemplate()
                .getSpec());
        assertThat(probe.getImage()).isEqualTo(expected);
        Map<String, String> env = plainEnv(operator);
        assertThat(env).containsEntry("TENSORLANE_RUNTIME_IMAGE", expected);
        Map<String, String> envBefore = plainEnv(operatorBefore);
        envBefore.put("TENSORLANE_RUNTIME_IMAGE", expected);
        assertThat(env).as("only TENSORLANE_RUNTIME_IMAGE changes").isEqualTo(envBefore);
        assertThat(operator.getImage()).isEqualTo(operatorBefore.getImage());

        // the operator started with that environment
        TensorlaneConfig config = TestConfig.fromEnvironment(env);
        assertThat(config.runtimeImage()).isEqualTo(expected);

        // an engine pod of type Tensorlane without spec.engine.image, with its hf:// download step
        InferenceDeploymentSpec spec = Fixtures.llama70b(8);
        assertThat(spec.engine.image).isNull();
        Plan plan = Planner.plan(
                spec, List.of(Fixtures.node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0)), Fixtures.SETTINGS);
        assertThat(plan.ok()).as(plan.message()).isTrue();
        PodSpec pod = Renderer.render(owner(spec), spec, plan, config)
                .deployment()
                .getSpec()
                .getTemplate()
                .getSpec();
        assertThat(pod.getContainers()).extracting(Container::getImage).containsExactly(expected);
        assertThat(pod.getInitContainers()).extracting(Container::getImage).containsExactly(expected);

        // its preflight Job and an inspection Job
        assertThat(only(PreflightJobs.job(owner(spec), "pro-0", 8, config)
                                .getSpec()
                                .getTemplate()
                                .getSpec())
                        .getImage())
                .isEqualTo(expected);
        ModelSource pvc = ModelSource.parse("pvc://models/llama");
        InferenceDeploymentSpec onPvc =
                SpecValidator.withDefaults(Fixtures.with(Fixtures.llama70b(8), s -> s.model.source = pvc.uri()));
        assertThat(only(InspectionJobs.job(owner(onPvc), onPvc, pvc, config)
                                .getSpec()
                                .getTemplate()
                                .getSpec())
                        .getImage())
                .isEqualTo(expected);
    }

    /** A kustomization in operator/target that installs manifests/overlays/{overlay} with one `images:` entry. */
    static String userOverlay(String overlay, String entry) throws IOException {
        Path repo = Manifests.repo();
        Path dir = Files.createTempDirectory(
                Files.createDirectories(repo.resolve("operator/target/user-overlays")), overlay + "-");
        String base =
                dir.relativize(repo.resolve("manifests/overlays/" + overlay)).toString();
        Files.writeString(
                dir.resolve("kustomization.yaml"),
                "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                        + "kind: Kustomization\n"
                        + "resources: [" + base + "]\n"
                        + "images:\n"
                        + "  - {name: tensorlane/tensorlane-runtime, " + entry + "}\n");
        return repo.relativize(dir).toString();
    }

    static InferenceDeployment owner(InferenceDeploymentSpec spec) {
        InferenceDeployment o = new InferenceDeployment();
        o.setMetadata(new ObjectMetaBuilder()
                .withName("llama")
                .withNamespace("ml")
                .withUid("uid-1")
                .withGeneration(1L)
                .build());
        o.setSpec(spec);
        return o;
    }

    static Container only(PodSpec pod) {
        assertThat(pod.getContainers()).hasSize(1);
        return pod.getContainers().get(0);
    }

    /** The container's environment variables with a plain value (valueFrom ones are resolved by the kubelet). */
    static Map<String, String> plainEnv(Container c) {
        Map<String, String> env = new LinkedHashMap<>();
        for (EnvVar e : c.getEnv()) {
            if (e.getValue() != null) {
                env.put(e.getName(), e.getValue());
            }
        }
        return env;
    }
}
