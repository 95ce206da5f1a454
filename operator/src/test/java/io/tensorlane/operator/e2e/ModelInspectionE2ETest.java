package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.ParallelismSpec;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.modelfacts.ConfigFacts;
import io.tensorlane.modelfacts.ModelFacts;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.modelfacts.TensorTally;
import io.tensorlane.operator.model.InspectionJobs;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.hub.Checkpoints;
import io.tensorlane.testkit.hub.LocalHub;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Models in the cluster, on the local control plane: a user writes a model name and a TP degree; the operator reads
 * config.json and the safetensors headers from a loopback Hub (made in the test), plans from them, and renders the
 * download step, the model volume and the probes. Failures end in ModelUnavailable with the reason; one model is read
 * once for ten deployments.
 */
@WithLocalCluster
class ModelInspectionE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static final String SHA = "2222222222222222222222222222222222222222";
    static final String TOKEN = "hf_e2e_token_do_not_leak";
    static LocalHub hub;
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws Exception {
        hub = new LocalHub();
        hub.put("org/tiny", new LocalHub.Repo(SHA, Checkpoints.tiny("LlamaForCausalLM"), null, false));
        hub.put("org/gated", new LocalHub.Repo(SHA, Checkpoints.tiny("LlamaForCausalLM"), TOKEN, true));
        hub.put("org/gpt2", new LocalHub.Repo(SHA, Checkpoints.tiny("GPT2LMHeadModel"), null, false));
        hub.put("org/shared", new LocalHub.Repo(SHA, Checkpoints.tiny("LlamaForCausalLM"), null, false));
        sim.addNode(TopologyFixtures.L40S_2);
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        operator = OperatorHarness.start(
                client, ns.name(), OperatorHarness.testSettings("tensorlane.model.hub-endpoint", hub.endpoint()));
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
        if (hub != null) {
            hub.close();
        }
    }

    /** What a user writes: a model name (source defaults to hf://name) and a TP degree. */
    static InferenceDeployment userWrites(String ns, String name, String model, int tp, int replicas) {
        InferenceDeployment d = new InferenceDeployment();
        d.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
        InferenceDeploymentSpec s = new InferenceDeploymentSpec();
        s.model = new ModelSpec();
        s.model.name = model;
        s.model.dtype = null;
        s.parallelism = new ParallelismSpec();
        s.parallelism.tensor = tp;
        s.replicas = replicas;
        s.rollout.stabilityWindowSeconds = 2;
        d.setSpec(s);
        return d;
    }

    static Predicate<InferenceDeployment> condition(String type, String reason) {
        return d -> d.getStatus() != null
                && Conditions.find(d.getStatus().conditions, type)
                        .filter(c -> "True".equals(c.getStatus()) && reason.equals(c.getReason()))
                        .isPresent();
    }

    static Deployment deploymentOf(KubernetesClient client, String ns, String name) {
        return client.apps().deployments().inNamespace(ns).withName(name).get();
    }

    @Test
    void aModelNameAndTpBecomeAServerPlannedFromTheRealConfig(KubernetesClient client, TestNamespace ns) {
        hub.delay(1500);
        try {
            client.resource(userWrites(ns.name(), "tiny", "org/tiny", 2, 1)).create();
            InferenceDeployment inspecting = Samples.await(
                    client, ns.name(), "tiny", TIMEOUT, condition(StatusAggregator.PROGRESSING, "InspectingModel"));
            assertThat(inspecting.getStatus().phase).isEqualTo(Phase.Progressing);
            assertThat(Conditions.find(inspecting.getStatus().conditions, StatusAggregator.PROGRESSING)
                            .orElseThrow()
                            .getMessage())
                    .contains("hf://org/tiny@main");
        } finally {
            hub.delay(0);
        }
        InferenceDeployment d = Samples.await(client, ns.name(), "tiny", TIMEOUT, Samples.phase(Phase.Ready));
        var m = d.getStatus().model;
        assertThat(m.source).isEqualTo("hf://org/tiny@main");
        assertThat(m.revision).isEqualTo(SHA);
        assertThat(m.architecture).isEqualTo("LlamaForCausalLM");
        assertThat(m.geometry.layers).isEqualTo(Checkpoints.LAYERS);
        assertThat(m.geometry.hiddenSize).isEqualTo(Checkpoints.HIDDEN);
        assertThat(m.geometry.kvHeads).isEqualTo(Checkpoints.KV_HEADS);
        assertThat(m.weightBytes).isEqualTo(Checkpoints.BF16_BYTES + Checkpoints.F32_BYTES);
        assertThat(m.weightBytesByDtype)
                .containsEntry("BF16", Checkpoints.BF16_BYTES)
                .containsEntry("F32", Checkpoints.F32_BYTES);
        assertThat(m.readAt).isNotBlank();
        // the plan used the weights that were read (split by TP 2)
        assertThat(d.getStatus().memoryPlan.weightsBytes).isEqualTo(m.weightBytes / 2);

        PodSpec pod =
                deploymentOf(client, ns.name(), "tiny").getSpec().getTemplate().getSpec();
        String dir = "/models/org--tiny--" + SHA;
        Container init = pod.getInitContainers().get(0);
        assertThat(init.getImage()).isEqualTo("tensorlane/tensorlane-runtime:test");
        assertThat(init.getArgs()).containsExactly("fetch-model", "--source", "hf://org/tiny@" + SHA, "--dest", dir);
        assertThat(init.getEnv()).extracting(EnvVar::getName).containsExactly("HF_ENDPOINT");
        assertThat(init.getEnv().get(0).getValue()).isEqualTo(hub.endpoint());
        var model = pod.getVolumes().stream()
                .filter(v -> v.getName().equals("model"))
                .findFirst()
                .orElseThrow();
        assertThat(model.getEmptyDir().getSizeLimit()).isEqualTo(new Quantity("2Gi"));
        Container engine = pod.getContainers().get(0);
        Map<String, String> env = engine.getEnv().stream()
                .filter(e -> e.getValue() != null)
                .collect(Collectors.toMap(EnvVar::getName, EnvVar::getValue));
        assertThat(env)
                .containsEntry(EngineEnv.MODEL_DIR, dir)
                .containsEntry(EngineEnv.MODEL_SOURCE, "hf://org/tiny@" + SHA)
                .containsEntry(EngineEnv.WORLD_SIZE, "2");
        assertThat(engine.getArgs()).containsExactly("serve");
        assertThat(engine.getVolumeMounts()).anySatisfy(v -> {
            assertThat(v.getName()).isEqualTo("model");
            assertThat(v.getMountPath()).isEqualTo("/models");
            assertThat(v.getReadOnly()).isTrue();
        });
        assertThat(engine.getStartupProbe().getHttpGet().getPath()).isEqualTo("/health/ready");
        assertThat(engine.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/health/ready");
        assertThat(engine.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/health/live");
        // the model read and the rollout it starts are one decision: one event naming both
        RollbackE2ETest.awaitReasons(client, ns, "tiny", "RolloutStarted", "Ready");
        assertThat(RollbackE2ETest.message(client, ns, "tiny", "RolloutStarted"))
                .contains("model hf://org/tiny@")
                .contains("at " + SHA);
    }

    @Test
    void aGatedModelNeedsItsTokenWhichNeverShowsInStatusOrEvents(KubernetesClient client, TestNamespace ns) {
        client.resource(userWrites(ns.name(), "gated-no-token", "org/gated", 2, 0))
                .create();
        InferenceDeployment d = Samples.await(
                client,
                ns.name(),
                "gated-no-token",
                TIMEOUT,
                condition(StatusAggregator.MODEL_UNAVAILABLE, "Unauthorized"));
        assertThat(d.getStatus().phase).isEqualTo(Phase.Invalid);
        assertThat(Conditions.find(d.getStatus().conditions, StatusAggregator.MODEL_UNAVAILABLE)
                        .orElseThrow()
                        .getMessage())
                .contains("401")
                .contains("org/gated")
                .contains("spec.model.tokenSecret");
        assertThat(deploymentOf(client, ns.name(), "gated-no-token")).isNull();

        client.resource(new SecretBuilder()
                        .withNewMetadata()
                        .withName("hf")
                        .withNamespace(ns.name())
                        .endMetadata()
                        .addToData(
                                "hf-token", Base64.getEncoder().encodeToString(TOKEN.getBytes(StandardCharsets.UTF_8)))
                        .build())
                .create();
        InferenceDeployment withToken = userWrites(ns.name(), "gated", "org/gated", 2, 0);
        withToken.getSpec().model.tokenSecret = new ModelSpec.TokenSecret();
        withToken.getSpec().model.tokenSecret.name = "hf";
        withToken.getSpec().model.tokenSecret.key = "hf-token";
        client.resource(withToken).create();
        InferenceDeployment ok = Samples.await(
                client,
                ns.name(),
                "gated",
                TIMEOUT,
                x -> x.getStatus() != null
                        && x.getStatus().model != null
                        && deploymentOf(client, ns.name(), "gated") != null);
        assertThat(ok.getStatus().model.revision).isEqualTo(SHA);
        Container init = deploymentOf(client, ns.name(), "gated")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getInitContainers()
                .get(0);
        EnvVar token = init.getEnv().stream()
                .filter(e -> e.getName().equals("HF_TOKEN"))
                .findFirst()
                .orElseThrow();
        assertThat(token.getValue()).isNull();
        assertThat(token.getValueFrom().getSecretKeyRef().getName()).isEqualTo("hf");
        assertThat(token.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("hf-token");

        String everything = Serialization.asJson(client.resources(InferenceDeployment.class)
                        .inNamespace(ns.name())
                        .list())
                + Serialization.asJson(
                        client.v1().events().inNamespace(ns.name()).list())
                + Serialization.asJson(
                        client.apps().deployments().inNamespace(ns.name()).list());
        assertThat(everything).doesNotContain(TOKEN);
        assertThat(hub.requests())
                .filteredOn(r -> r.path().startsWith("/api/models/org/gated/"))
                .anySatisfy(r -> assertThat(r.authorization()).isEqualTo("Bearer " + TOKEN));
    }

    @Test
    void missingAndUnsupportedModelsSayWhichAndWhy(KubernetesClient client, TestNamespace ns) {
        client.resource(userWrites(ns.name(), "missing", "org/missing", 2, 0)).create();
        client.resource(userWrites(ns.name(), "gpt2", "org/gpt2", 2, 0)).create();
        InferenceDeployment missing = Samples.await(
                client, ns.name(), "missing", TIMEOUT, condition(StatusAggregator.MODEL_UNAVAILABLE, "ModelNotFound"));
        assertThat(Conditions.find(missing.getStatus().conditions, StatusAggregator.MODEL_UNAVAILABLE)
                        .orElseThrow()
                        .getMessage())
                .isEqualTo("model org/missing (revision 'main') at " + hub.endpoint()
                        + ": HTTP 404, the model does not exist");
        InferenceDeployment gpt2 = Samples.await(
                client,
                ns.name(),
                "gpt2",
                TIMEOUT,
                condition(StatusAggregator.MODEL_UNAVAILABLE, "UnsupportedArchitecture"));
        Condition c = Conditions.find(gpt2.getStatus().conditions, StatusAggregator.MODEL_UNAVAILABLE)
                .orElseThrow();
        assertThat(c.getMessage())
                .contains("architecture GPT2LMHeadModel is not supported")
                .contains("LlamaForCausalLM");
        assertThat(gpt2.getStatus().phase).isEqualTo(Phase.Invalid);
        RollbackE2ETest.awaitReasons(client, ns, "gpt2", "ModelUnavailable");
    }

    @Test
    void oneModelIsReadOnceForTenDeployments(KubernetesClient client, TestNamespace ns) {
        for (int i = 0; i < 10; i++) {
            client.resource(userWrites(ns.name(), "shared-" + i, "org/shared", 2, 0))
                    .create();
        }
        for (int i = 0; i < 10; i++) {
            InferenceDeployment d = Samples.await(
                    client,
                    ns.name(),
                    "shared-" + i,
                    TIMEOUT,
                    x -> x.getStatus() != null && x.getStatus().model != null);
            assertThat(d.getStatus().model.revision).isEqualTo(SHA);
        }
        assertThat(hub.count("/api/models/org/shared/revision/")).isEqualTo(1);
        assertThat(hub.count("/org/shared/resolve/" + SHA + "/config.json")).isEqualTo(1);
        // two Range requests (length, header) per safetensors file, once
        assertThat(hub.count("/org/shared/resolve/" + SHA + "/model-")).isEqualTo(4);
    }

    /** What the runtime's inspect-model prints for the tiny checkpoint (the same modelfacts code and JSON). */
    static String inspectModelOutput(String source) {
        ConfigFacts c = ConfigFacts.parse(
                new String(Checkpoints.config("LlamaForCausalLM"), StandardCharsets.UTF_8), "/models/tiny/config.json");
        ModelStatus s = ModelFacts.of(
                        c,
                        List.of(new TensorTally(
                                Map.of("BF16", Checkpoints.BF16_BYTES, "F32", Checkpoints.F32_BYTES),
                                Checkpoints.BF16_BYTES / 2 + Checkpoints.F32_BYTES / 4,
                                0,
                                0)),
                        "/models/tiny")
                .toStatus(source, "sha256:" + "ab".repeat(32), "2026-11-29T12:00:00Z");
        return Serialization.asJson(s);
    }

    @Test
    void pvcAndFileSourcesAreReadByAnInspectionJob(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        ModelSource pvcSource = ModelSource.parse("pvc://models/tiny");
        ModelSource fileSource = ModelSource.parse("file:///var/lib/models/gpt2");
        sim.addRule(SimRule.forAllPods("inspect-pvc", SimAction.succeed(inspectModelOutput(pvcSource.uri())))
                .inNamespace(ns.name())
                .withLabels(Map.of(InspectionJobs.LABEL, InspectionJobs.hash(pvcSource)))
                .withDelayMillis(500));
        sim.addRule(SimRule.forAllPods(
                        "inspect-file",
                        SimAction.fail("UnsupportedArchitecture: /models/config.json: "
                                + "architecture GPT2LMHeadModel is not supported by the Tensorlane runtime"))
                .inNamespace(ns.name())
                .withLabels(Map.of(InspectionJobs.LABEL, InspectionJobs.hash(fileSource))));
        // the claim the source names, bound to a volume (a pod whose claim is missing or unbound is not scheduled)
        client.persistentVolumes()
                .resource(new PersistentVolumeBuilder()
                        .withNewMetadata()
                        .withName(ns.name() + "-models")
                        .endMetadata()
                        .withNewSpec()
                        .addToCapacity("storage", new Quantity("1Gi"))
                        .withAccessModes("ReadOnlyMany")
                        .withStorageClassName("")
                        .withNewHostPath()
                        .withPath("/var/lib/models")
                        .endHostPath()
                        .withNewClaimRef()
                        .withNamespace(ns.name())
                        .withName("models")
                        .endClaimRef()
                        .endSpec()
                        .build())
                .create();
        client.persistentVolumeClaims()
                .inNamespace(ns.name())
                .resource(new PersistentVolumeClaimBuilder()
                        .withNewMetadata()
                        .withName("models")
                        .endMetadata()
                        .withNewSpec()
                        .withAccessModes("ReadOnlyMany")
                        .withStorageClassName("")
                        .withVolumeName(ns.name() + "-models")
                        .withNewResources()
                        .addToRequests("storage", new Quantity("1Gi"))
                        .endResources()
                        .endSpec()
                        .build())
                .create();
        for (int i = 0; i < 2; i++) {
            InferenceDeployment d = userWrites(ns.name(), "pvc-read-" + i, "tiny", 2, 0);
            d.getSpec().model.source = pvcSource.uri();
            client.resource(d).create();
        }
        InferenceDeployment file = userWrites(ns.name(), "file-gpt2", "gpt2", 2, 0);
        file.getSpec().model.source = fileSource.uri();
        client.resource(file).create();

        InferenceDeployment inspecting = Samples.await(
                client, ns.name(), "pvc-read-0", TIMEOUT, condition(StatusAggregator.PROGRESSING, "InspectingModel"));
        assertThat(Conditions.find(inspecting.getStatus().conditions, StatusAggregator.PROGRESSING)
                        .orElseThrow()
                        .getMessage())
                .contains("inspect-model")
                .contains(InspectionJobs.name(pvcSource));
        for (int i = 0; i < 2; i++) {
            InferenceDeployment d = Samples.await(
                    client,
                    ns.name(),
                    "pvc-read-" + i,
                    TIMEOUT,
                    x -> x.getStatus() != null
                            && x.getStatus().model != null
                            && deploymentOf(client, ns.name(), x.getMetadata().getName()) != null);
            assertThat(d.getStatus().model.source).isEqualTo("pvc://models/tiny");
            assertThat(d.getStatus().model.revision).isEqualTo("sha256:" + "ab".repeat(32));
            assertThat(d.getStatus().model.geometry.layers).isEqualTo(Checkpoints.LAYERS);
            assertThat(d.getStatus().memoryPlan.weightsBytes)
                    .isEqualTo((Checkpoints.BF16_BYTES + Checkpoints.F32_BYTES) / 2);
        }
        // one Job for the source, shared by both deployments: inspect-model with the claim mounted read-only, no GPU
        var jobs = client.batch()
                .v1()
                .jobs()
                .inNamespace(ns.name())
                .withLabel(InspectionJobs.LABEL, InspectionJobs.hash(pvcSource))
                .list()
                .getItems();
        assertThat(jobs).hasSize(1);
        PodSpec jp = jobs.get(0).getSpec().getTemplate().getSpec();
        assertThat(jp.getContainers().get(0).getArgs())
                .containsExactly("inspect-model", "--dir", "/models/tiny", "--source", "pvc://models/tiny");
        assertThat(jp.getContainers().get(0).getImage()).isEqualTo("tensorlane/tensorlane-runtime:test");
        assertThat(jp.getContainers().get(0).getResources().getLimits()).doesNotContainKey("nvidia.com/gpu");
        assertThat(jp.getVolumes()).anySatisfy(x -> {
            assertThat(x.getPersistentVolumeClaim().getClaimName()).isEqualTo("models");
            assertThat(x.getPersistentVolumeClaim().getReadOnly()).isTrue();
        });

        InferenceDeployment gpt2 = Samples.await(
                client,
                ns.name(),
                "file-gpt2",
                TIMEOUT,
                condition(StatusAggregator.MODEL_UNAVAILABLE, "UnsupportedArchitecture"));
        assertThat(Conditions.find(gpt2.getStatus().conditions, StatusAggregator.MODEL_UNAVAILABLE)
                        .orElseThrow()
                        .getMessage())
                .isEqualTo("/models/config.json: architecture GPT2LMHeadModel is not supported by the Tensorlane "
                        + "runtime");
        assertThat(deploymentOf(client, ns.name(), "file-gpt2")).isNull();
    }

    @Test
    void otherSourcesAreMountedAndUnknownSchemesAreRejectedAtApplyTime(KubernetesClient client, TestNamespace ns) {
        InferenceDeployment bad = userWrites(ns.name(), "s3", "org/tiny", 2, 0);
        bad.getSpec().model.source = "s3://bucket/llama";
        assertThatThrownBy(() -> client.resource(bad).create())
                .isInstanceOf(KubernetesClientException.class)
                .hasMessageContaining("spec.model.source");

        InferenceDeployment pvc = userWrites(ns.name(), "pvc", "org/tiny", 2, 0);
        pvc.getSpec().model.source = "pvc://models/tiny";
        ModelGeometry g = new ModelGeometry();
        g.layers = Checkpoints.LAYERS;
        g.hiddenSize = Checkpoints.HIDDEN;
        g.attentionHeads = Checkpoints.HEADS;
        g.kvHeads = Checkpoints.KV_HEADS;
        pvc.getSpec().model.geometry = g;
        pvc.getSpec().model.weightBytes = 1L << 20;
        client.resource(pvc).create();
        Samples.await(client, ns.name(), "pvc", TIMEOUT, x -> deploymentOf(client, ns.name(), "pvc") != null);
        PodSpec pod =
                deploymentOf(client, ns.name(), "pvc").getSpec().getTemplate().getSpec();
        assertThat(pod.getInitContainers()).isEmpty();
        var v = pod.getVolumes().stream()
                .filter(x -> x.getName().equals("model"))
                .findFirst()
                .orElseThrow();
        assertThat(v.getPersistentVolumeClaim().getClaimName()).isEqualTo("models");
        assertThat(v.getPersistentVolumeClaim().getReadOnly()).isTrue();
        assertThat(pod.getContainers().get(0).getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo(EngineEnv.MODEL_DIR);
            assertThat(e.getValue()).isEqualTo("/models/tiny");
        });
        assertThat(client.batch().v1().jobs().inNamespace(ns.name()).list().getItems())
                .as("a spec with geometry and weightBytes needs no inspection Job")
                .isEmpty();

        // oci:// needs image volumes (Kubernetes 1.31+); the test API server is older and says so
        InferenceDeployment oci = userWrites(ns.name(), "oci", "org/tiny", 2, 0);
        oci.getSpec().model.source = "oci://registry.local/models/tiny:v1";
        client.resource(oci).create();
        InferenceDeployment o = Samples.await(
                client,
                ns.name(),
                "oci",
                TIMEOUT,
                condition(StatusAggregator.MODEL_UNAVAILABLE, "ImageVolumeUnsupported"));
        assertThat(Conditions.find(o.getStatus().conditions, StatusAggregator.MODEL_UNAVAILABLE)
                        .orElseThrow()
                        .getMessage())
                .contains("1.31")
                .contains("1.20");
        assertThat(List.of(o.getStatus().phase)).containsExactly(Phase.Invalid);
    }
}
