package io.tensorlane.operator.model;

import static io.tensorlane.operator.plan.Fixtures.SETTINGS;
import static io.tensorlane.operator.plan.Fixtures.node;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Planner;
import io.tensorlane.operator.render.ModelVolumes;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.topology.TopologyFixtures;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A draft model reaches the pod as the target does (its own volume, download step and read-only mount), its facts fill
 * the spec the planner sees, and a deployment waits for (or reports) the draft as it does for the target.
 */
class DraftModelPodTest {
    static final String SHA = "0e9e39f249a16976918f6564b8830bc894c89659";
    static final String DRAFT_SHA = "1111111111111111111111111111111111111111";

    static ModelStatus status(String source, String sha, long bytes) {
        ModelStatus m = new ModelStatus();
        m.source = source;
        m.revision = sha;
        m.weightBytes = bytes;
        m.dtype = "bfloat16";
        m.geometry = Fixtures.llama1bGeometry();
        return m;
    }

    /** Llama-3.1-8B (facts in the spec) with a draft named only by source: its facts come from status.draftModel. */
    static InferenceDeploymentSpec spec(EngineType engine, String draftSource) {
        InferenceDeploymentSpec s = Fixtures.llama8b(2);
        s.engine.type = engine;
        s.engine.image = engine == EngineType.Tensorlane ? null : "engine:1";
        s.serving.speculative = new SpeculativeSpec();
        s.serving.speculative.method = SpeculativeSpec.Method.draft;
        s.serving.speculative.draftModel = new ModelSpec();
        s.serving.speculative.draftModel.name = "meta-llama/Llama-3.2-1B-Instruct";
        s.serving.speculative.draftModel.source = draftSource;
        return s;
    }

    static PodSpec pod(InferenceDeploymentSpec raw, ModelStatus draft) {
        InferenceDeployment o = new InferenceDeployment();
        o.setMetadata(new ObjectMetaBuilder()
                .withName("m")
                .withNamespace("ns")
                .withUid("u")
                .withGeneration(1L)
                .build());
        o.setSpec(raw);
        InferenceDeploymentSpec spec = ModelResolution.fill(raw, null, draft);
        Plan plan = Planner.plan(spec, List.of(node("pro-0", TopologyFixtures.RTX_PRO_6000_PCIE_8, 0)), SETTINGS);
        assertThat(plan.ok()).as(plan.message()).isTrue();
        assertThat(plan.memory().draftWeightsBytes()).isPositive();
        return Renderer.render(o, spec, plan, TestConfig.defaults(), null, draft)
                .deployment()
                .getSpec()
                .getTemplate()
                .getSpec();
    }

    static Stream<Arguments> sources() {
        String hubDir = "/draft-model/meta-llama--Llama-3.2-1B-Instruct--" + DRAFT_SHA;
        return Stream.of(
                Arguments.of("hf://meta-llama/Llama-3.2-1B-Instruct", "emptyDir", hubDir, true),
                Arguments.of("pvc://drafts/llama-1b", "persistentVolumeClaim", "/draft-model/llama-1b", false),
                Arguments.of("file:///srv/drafts/llama-1b", "hostPath", "/draft-model", false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("sources")
    void theDraftHasItsOwnVolumeAndTheEngineIsPointedAtIt(String source, String kind, String dir, boolean downloads) {
        ModelStatus draft = status(source + (source.startsWith("hf://") ? "@main" : ""), DRAFT_SHA, 2_471_645_184L);
        PodSpec pod = pod(spec(EngineType.Tensorlane, source), draft);
        Volume v = pod.getVolumes().stream()
                .filter(x -> x.getName().equals(ModelVolumes.DRAFT_VOLUME))
                .findFirst()
                .orElseThrow();
        assertThat(
                        kind.equals("emptyDir")
                                ? v.getEmptyDir()
                                : kind.equals("hostPath") ? v.getHostPath() : v.getPersistentVolumeClaim())
                .as(kind)
                .isNotNull();
        assertThat(pod.getVolumes()).extracting(Volume::getName).contains(ModelVolumes.VOLUME);
        Container engine = pod.getContainers().get(0);
        VolumeMount m = engine.getVolumeMounts().stream()
                .filter(x -> x.getName().equals(ModelVolumes.DRAFT_VOLUME))
                .findFirst()
                .orElseThrow();
        assertThat(m.getMountPath()).isEqualTo(ModelVolumes.DRAFT_MOUNT);
        assertThat(m.getReadOnly()).isTrue();
        assertThat(engine.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo(EngineEnv.SPECULATIVE);
            assertThat(e.getValue()).isEqualTo("draft:" + dir + ",k=4");
        });
        List<String> inits =
                pod.getInitContainers().stream().map(Container::getName).toList();
        assertThat(inits.contains(ModelVolumes.DRAFT_INIT_CONTAINER)).isEqualTo(downloads);
        if (downloads) {
            Container fetch = pod.getInitContainers().stream()
                    .filter(c -> c.getName().equals(ModelVolumes.DRAFT_INIT_CONTAINER))
                    .findFirst()
                    .orElseThrow();
            assertThat(fetch.getArgs())
                    .containsExactly(
                            "fetch-model",
                            "--source",
                            "hf://meta-llama/Llama-3.2-1B-Instruct@" + DRAFT_SHA,
                            "--dest",
                            dir);
            assertThat(fetch.getVolumeMounts()).extracting(VolumeMount::getName).contains(ModelVolumes.DRAFT_VOLUME);
        }
    }

    @Test
    void theDraftsFactsFillTheSpecAndAnOverrideWins() {
        ModelStatus draft = status("hf://meta-llama/Llama-3.2-1B-Instruct@main", DRAFT_SHA, 2_471_645_184L);
        InferenceDeploymentSpec raw = spec(EngineType.Tensorlane, null);
        InferenceDeploymentSpec filled = ModelResolution.fill(raw, null, draft);
        ModelSpec d = filled.serving.speculative.draftModel;
        assertThat(d.weightBytes).isEqualTo(2_471_645_184L);
        assertThat(d.geometry.layers).isEqualTo(16);
        assertThat(d.dtype).isEqualTo(ModelSpec.DType.bf16);
        assertThat(raw.serving.speculative.draftModel.weightBytes)
                .as("the spec is not modified")
                .isNull();

        raw.serving.speculative.draftModel.weightBytes = 3_000_000_000L;
        assertThat(ModelResolution.fill(raw, null, draft).serving.speculative.draftModel.weightBytes)
                .isEqualTo(3_000_000_000L);
    }

    @Test
    void theDraftsInspectionJobMountsTheDraftsSource() {
        InferenceDeployment o = new InferenceDeployment();
        o.setMetadata(new ObjectMetaBuilder()
                .withName("m")
                .withNamespace("ns")
                .withUid("u")
                .build());
        InferenceDeploymentSpec spec = spec(EngineType.Tensorlane, "pvc://drafts/llama-1b");
        ModelSource src = ModelSource.of("pvc://drafts/llama-1b", "meta-llama/Llama-3.2-1B-Instruct");
        var job = InspectionJobs.job(
                o,
                io.tensorlane.operator.plan.SpecValidator.withDefaults(spec),
                spec.serving.speculative.draftModel,
                src,
                TestConfig.defaults());
        var pod = job.getSpec().getTemplate().getSpec();
        assertThat(pod.getVolumes().stream()
                        .filter(v -> v.getPersistentVolumeClaim() != null)
                        .map(v -> v.getPersistentVolumeClaim().getClaimName()))
                .containsExactly("drafts");
        assertThat(pod.getContainers().get(0).getArgs())
                .containsExactly("inspect-model", "--dir", "/models/llama-1b", "--source", src.uri());
        assertThat(job.getMetadata().getName()).isEqualTo(InspectionJobs.name(src));
    }

    static Stream<Arguments> merges() {
        ModelSource t = ModelSource.of(null, "meta-llama/Llama-3.1-8B-Instruct");
        ModelSource d = ModelSource.of(null, "meta-llama/Llama-3.2-1B-Instruct");
        ModelStatus ds = status("hf://meta-llama/Llama-3.2-1B-Instruct@main", DRAFT_SHA, 1);
        return Stream.of(
                Arguments.of("no draft", ModelResolution.notNeeded(t), null, ModelResolution.State.NOT_NEEDED, null),
                Arguments.of(
                        "both known",
                        ModelResolution.notNeeded(t),
                        ModelResolution.known(d, ds),
                        ModelResolution.State.NOT_NEEDED,
                        null),
                Arguments.of(
                        "the draft is being read",
                        ModelResolution.notNeeded(t),
                        ModelResolution.pending(d, "reading config.json"),
                        ModelResolution.State.PENDING,
                        "spec.serving.speculative.draftModel: reading config.json"),
                Arguments.of(
                        "the draft does not exist",
                        ModelResolution.notNeeded(t),
                        ModelResolution.failed(d, "ModelNotFound", "hf://x/y not found"),
                        ModelResolution.State.FAILED,
                        "spec.serving.speculative.draftModel: hf://x/y not found"),
                Arguments.of(
                        "the target fails first: its message",
                        ModelResolution.failed(t, "Unauthorized", "gated"),
                        ModelResolution.pending(d, "reading"),
                        ModelResolution.State.FAILED,
                        "gated"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("merges")
    void aDeploymentWaitsForTheDraftAsForTheTarget(
            String name, ModelResolution target, ModelResolution draft, ModelResolution.State state, String message) {
        ModelResolution r = ModelResolution.withDraft(target, draft);
        assertThat(r.state()).isEqualTo(state);
        assertThat(r.message()).isEqualTo(message);
        assertThat(r.draftStatus()).isEqualTo(draft == null ? null : draft.status());
    }
}
