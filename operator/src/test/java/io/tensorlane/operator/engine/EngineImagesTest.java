package io.tensorlane.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.preflight.PreflightJobs;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which image a pod runs (pure): {@link EngineProfiles#image} for the engine container, {@link
 * EngineProfiles#preflightImage} for the preflight Job, from the engine type, {@code spec.engine.image} and the operator's
 * {@code tensorlane.runtime-image}.
 */
class EngineImagesTest {
    static final String RUNTIME = "registry.example.com/ml/tensorlane-runtime:0.2.0";

    static InferenceDeploymentSpec spec(EngineType type, String image) {
        InferenceDeploymentSpec s = new InferenceDeploymentSpec();
        if (type != null) {
            s.engine = new EngineSpec();
            s.engine.type = type;
            s.engine.image = image;
        }
        return s;
    }

    @ParameterizedTest(name = "{0} with image ''{1}'' -> engine {2}, preflight {3}")
    @CsvSource(
            nullValues = "null",
            value = {
                // type,    spec.engine.image,       engine image,            preflight image
                "null,       null,                    RUNTIME,                 RUNTIME",
                "Tensorlane, null,                    RUNTIME,                 RUNTIME",
                "Tensorlane, '',                      RUNTIME,                 RUNTIME",
                "Tensorlane, '  ',                    RUNTIME,                 RUNTIME",
                "Tensorlane, my.registry/tl:dev,      my.registry/tl:dev,      my.registry/tl:dev",
                "SGLang,     lmsysorg/sglang:v0.4.6,  lmsysorg/sglang:v0.4.6,  RUNTIME",
                "SGLang,     null,                    null,                    RUNTIME",
                "VLLM,       vllm/vllm-openai:v0.8.5, vllm/vllm-openai:v0.8.5, RUNTIME",
                "VLLM,       '',                      null,                    RUNTIME",
            })
    void imageOfTheEngineAndOfItsPreflight(EngineType type, String given, String engine, String preflight) {
        InferenceDeploymentSpec s = spec(type, given);

        assertThat(EngineProfiles.image(s, RUNTIME)).isEqualTo(resolve(engine));
        assertThat(EngineProfiles.preflightImage(s, RUNTIME)).isEqualTo(resolve(preflight));
    }

    /** The rendered pods take their images from the configuration's runtime image through these two functions. */
    @ParameterizedTest
    @CsvSource(
            nullValues = "null",
            value = {"null", "my.registry/tl:dev"})
    void renderedPodsUseTheConfiguredRuntimeImage(String given) {
        var config = TestConfig.with("tensorlane.runtime-image", RUNTIME);
        InferenceDeploymentSpec spec = Fixtures.with(Fixtures.llama70b(8), s -> s.engine.image = given);
        var plan = io.tensorlane.operator.plan.Planner.plan(
                spec, List.of(Fixtures.node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0)), Fixtures.SETTINGS);
        var owner = new io.tensorlane.api.v1alpha1.InferenceDeployment();
        owner.getMetadata().setName("llama");
        owner.getMetadata().setNamespace("ml");
        owner.getMetadata().setUid("u1");
        owner.setSpec(spec);
        String expected = given == null ? RUNTIME : given;

        var pod = Renderer.render(owner, spec, plan, config)
                .deployment()
                .getSpec()
                .getTemplate()
                .getSpec();
        assertThat(pod.getContainers().get(0).getImage()).isEqualTo(expected);
        assertThat(pod.getInitContainers().get(0).getImage())
                .as("the download step is always the runtime")
                .isEqualTo(RUNTIME);
        assertThat(PreflightJobs.job(owner, "pro-0", 8, config)
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getImage())
                .isEqualTo(expected);
    }

    private static String resolve(String v) {
        return "RUNTIME".equals(v) ? RUNTIME : v;
    }
}
