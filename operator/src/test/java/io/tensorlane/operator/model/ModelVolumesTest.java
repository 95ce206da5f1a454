package io.tensorlane.operator.model;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.llama8b;
import static io.tensorlane.operator.plan.Fixtures.node;
import static io.tensorlane.operator.plan.Fixtures.with;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** How the model reaches the pod, per source kind and engine. */
class ModelVolumesTest {
    static final String SHA = "0e9e39f249a16976918f6564b8830bc894c89659";
    static final TensorlaneConfig RS = TestConfig.defaults();

    static PodSpec pod(InferenceDeploymentSpec spec, ModelStatus model, TensorlaneConfig rs) {
        InferenceDeployment o = new InferenceDeployment();
        o.setMetadata(new ObjectMetaBuilder()
                .withName("m")
                .withNamespace("ns")
                .withUid("u")
                .withGeneration(1L)
                .build());
        o.setSpec(spec);
        Plan plan = Planner.plan(spec, List.of(node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0)), SETTINGS);
        assertThat(plan.ok()).as(plan.message()).isTrue();
        return Renderer.render(o, spec, plan, rs, model)
                .deployment()
                .getSpec()
                .getTemplate()
                .getSpec();
    }

    static ModelStatus pinned() {
        ModelStatus m = new ModelStatus();
        m.source = "hf://meta-llama/Llama-3.1-8B-Instruct@main";
        m.revision = SHA;
        m.weightBytes = 16_060_522_496L;
        return m;
    }

    static Volume volume(PodSpec p) {
        return p.getVolumes().stream()
                .filter(v -> v.getName().equals("model"))
                .findFirst()
                .orElseThrow();
    }

    static Map<String, EnvVar> env(Container c) {
        return c.getEnv().stream().collect(Collectors.toMap(EnvVar::getName, e -> e));
    }

    @Test
    void hfDownloadsIntoAnEmptyDirPinnedToTheCommitWithTheTokenFromTheSecret() {
        InferenceDeploymentSpec spec = with(llama8b(2), s -> {
            s.model.tokenSecret = new ModelSpec.TokenSecret();
            s.model.tokenSecret.name = "hf";
        });
        PodSpec p = pod(spec, pinned(), RS);
        String dir = "/models/meta-llama--Llama-3.1-8B-Instruct--" + SHA;
        Container init = p.getInitContainers().get(0);
        assertThat(init.getName()).isEqualTo("fetch-model");
        assertThat(init.getImage()).isEqualTo("tensorlane/tensorlane-runtime:0.1.0");
        assertThat(init.getCommand()).isEmpty();
        assertThat(init.getArgs())
                .containsExactly(
                        "fetch-model", "--source", "hf://meta-llama/Llama-3.1-8B-Instruct@" + SHA, "--dest", dir);
        assertThat(init.getEnv()).singleElement().satisfies(e -> {
            assertThat(e.getName()).isEqualTo("HF_TOKEN");
            assertThat(e.getValue()).isNull();
            assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("hf");
            assertThat(e.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("token");
        });
        assertThat(init.getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo("model");
            assertThat(m.getMountPath()).isEqualTo("/models");
            assertThat(m.getReadOnly()).isNull();
        });
        // 16.06 GB + 5% + 1 GiB → 17 GiB
        assertThat(volume(p).getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("17Gi"));
        Container engine = p.getContainers().get(0);
        assertThat(engine.getVolumeMounts()).anySatisfy(m -> {
            assertThat(m.getName()).isEqualTo("model");
            assertThat(m.getReadOnly()).isTrue();
        });
        assertThat(env(engine).get(EngineEnv.MODEL_DIR).getValue()).isEqualTo(dir);
        assertThat(env(engine).get(EngineEnv.MODEL_SOURCE).getValue())
                .isEqualTo("hf://meta-llama/Llama-3.1-8B-Instruct@" + SHA);
        assertThat(engine.getArgs()).containsExactly("serve");
        assertThat(engine.getEnv()).noneMatch(e -> e.getName().equals("HF_TOKEN"));
    }

    @Test
    void hubEndpointIsPassedOnlyWhenNotTheDefaultAndAPvcStorageIsReused() {
        InferenceDeploymentSpec spec = with(llama8b(2), s -> {
            s.model.storage = new ModelSpec.ModelStorage();
            s.model.storage.claimName = "model-cache";
        });
        PodSpec p = pod(spec, pinned(), TestConfig.with("tensorlane.model.hub-endpoint", "http://127.0.0.1:8123/"));
        assertThat(p.getInitContainers().get(0).getEnv()).singleElement().satisfies(e -> {
            assertThat(e.getName()).isEqualTo("HF_ENDPOINT");
            assertThat(e.getValue()).isEqualTo("http://127.0.0.1:8123");
        });
        assertThat(volume(p).getPersistentVolumeClaim().getClaimName()).isEqualTo("model-cache");
        assertThat(volume(p).getEmptyDir()).isNull();
        assertThat(pod(
                                llama8b(2),
                                pinned(),
                                TestConfig.with(
                                        "tensorlane.model.hub-endpoint", TensorlaneConfig.Model.PUBLIC_HUB + "/"))
                        .getInitContainers()
                        .get(0)
                        .getEnv())
                .isEmpty();
    }

    @Test
    void pvcFileAndOciAreMountedReadOnlyWithoutADownload() {
        record Case(String source, String dir) {}
        for (Case c : List.of(
                new Case("pvc://models/llama/8b", "/models/llama/8b"),
                new Case("file:///var/lib/llama", "/models"),
                new Case("oci://registry.local/models/llama:v1", "/models"))) {
            PodSpec p = pod(with(llama8b(2), s -> s.model.source = c.source()), null, RS);
            assertThat(p.getInitContainers()).as(c.source()).isEmpty();
            Container engine = p.getContainers().get(0);
            assertThat(env(engine).get(EngineEnv.MODEL_DIR).getValue())
                    .as(c.source())
                    .isEqualTo(c.dir());
            assertThat(engine.getVolumeMounts())
                    .anySatisfy(m -> assertThat(m.getReadOnly()).isTrue());
            Volume v = volume(p);
            switch (c.source().substring(0, 3)) {
                case "pvc" -> {
                    assertThat(v.getPersistentVolumeClaim().getClaimName()).isEqualTo("models");
                    assertThat(v.getPersistentVolumeClaim().getReadOnly()).isTrue();
                }
                case "fil" -> {
                    assertThat(v.getHostPath().getPath()).isEqualTo("/var/lib/llama");
                    assertThat(v.getHostPath().getType()).isEqualTo("Directory");
                }
                default -> assertThat(v.getImage().getReference()).isEqualTo("registry.local/models/llama:v1");
            }
        }
    }

    @Test
    void sglangAndVllmGetTheSameVolumeAndTheirModelPathFlag() {
        String dir = "/models/meta-llama--Llama-3.1-8B-Instruct--" + SHA;
        for (EngineType t : List.of(EngineType.SGLang, EngineType.VLLM)) {
            PodSpec p = pod(
                    with(llama8b(2), s -> {
                        s.engine.type = t;
                        s.engine.image = "engine:1";
                    }),
                    pinned(),
                    RS);
            assertThat(p.getInitContainers()).singleElement().satisfies(i -> {
                assertThat(i.getImage()).isEqualTo("tensorlane/tensorlane-runtime:0.1.0");
                assertThat(i.getArgs()).contains("--dest", dir);
            });
            List<String> args = p.getContainers().get(0).getArgs();
            if (t == EngineType.SGLang) {
                assertThat(String.join(" ", args)).contains("--model-path " + dir);
            } else {
                assertThat(args.get(0)).isEqualTo(dir);
            }
            assertThat(String.join(" ", args)).contains("--served-model-name meta-llama/Llama-3.1-8B-Instruct");
            assertThat(Optional.ofNullable(volume(p).getEmptyDir())).isPresent();
        }
    }

    @Test
    void probesLetALoadingPodLoad() {
        Container engine = pod(llama8b(2), pinned(), RS).getContainers().get(0);
        assertThat(engine.getStartupProbe().getHttpGet().getPath()).isEqualTo("/health/ready");
        assertThat(engine.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/health/ready");
        assertThat(engine.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health/live");
        // 16 GB loads within the 900 s progress deadline budget
        assertThat(engine.getStartupProbe().getFailureThreshold()
                        * engine.getStartupProbe().getPeriodSeconds())
                .isEqualTo(900);
    }
}
