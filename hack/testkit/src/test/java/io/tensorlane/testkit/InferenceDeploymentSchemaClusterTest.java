package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ParallelismSpec;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The real API server enforces the CRD schema at apply time, with the schema's message. */
@WithLocalCluster
class InferenceDeploymentSchemaClusterTest {

    static InferenceDeployment valid(String name) {
        var d = new InferenceDeployment();
        d.getMetadata().setName(name);
        var spec = new InferenceDeploymentSpec();
        spec.model = new ModelSpec();
        spec.model.name = "meta-llama/Llama-3.1-8B-Instruct";
        spec.model.weightBytes = 16_060_000_000L;
        spec.model.geometry = new ModelGeometry();
        spec.model.geometry.layers = 32;
        spec.model.geometry.hiddenSize = 4096;
        spec.model.geometry.attentionHeads = 32;
        spec.model.geometry.kvHeads = 8;
        spec.parallelism = new ParallelismSpec();
        spec.parallelism.tensor = 2;
        d.setSpec(spec);
        return d;
    }

    static Stream<Arguments> invalid() {
        return Stream.of(
                Arguments.of(
                        "tensor-zero",
                        (Consumer<InferenceDeploymentSpec>) s -> s.parallelism.tensor = 0,
                        "spec.parallelism.tensor in body should be greater than or equal to 1"),
                Arguments.of(
                        "tensor-sixteen",
                        (Consumer<InferenceDeploymentSpec>) s -> s.parallelism.tensor = 16,
                        "spec.parallelism.tensor in body should be less than or equal to 8"),
                Arguments.of(
                        "fraction-too-big",
                        (Consumer<InferenceDeploymentSpec>) s -> s.memory.fraction = "1.5",
                        "spec.memory.fraction in body should match '^(auto|0\\.[0-9]{1,4})$'"),
                // geometry is optional (read from the model), but a geometry that is given is complete
                Arguments.of(
                        "geometry-without-layers",
                        (Consumer<InferenceDeploymentSpec>) s -> s.model.geometry.layers = null,
                        "spec.model.geometry.layers: Required value"),
                Arguments.of(
                        "unknown-source-scheme",
                        (Consumer<InferenceDeploymentSpec>) s -> s.model.source = "s3://bucket/m",
                        "spec.model.source in body should match"),
                // the draft model is a ModelSpec: a draft named without a name is refused like spec.model would be
                Arguments.of(
                        "draft-model-without-a-name",
                        (Consumer<InferenceDeploymentSpec>) s -> {
                            s.serving.speculative = new io.tensorlane.api.v1alpha1.SpeculativeSpec();
                            s.serving.speculative.method = io.tensorlane.api.v1alpha1.SpeculativeSpec.Method.draft;
                            s.serving.speculative.draftModel = new ModelSpec();
                            s.serving.speculative.draftModel.source = "hf://org/small";
                        },
                        "spec.serving.speculative.draftModel.name: Required value"),
                Arguments.of(
                        "draft-model-of-an-unknown-scheme",
                        (Consumer<InferenceDeploymentSpec>) s -> {
                            s.serving.speculative = new io.tensorlane.api.v1alpha1.SpeculativeSpec();
                            s.serving.speculative.method = io.tensorlane.api.v1alpha1.SpeculativeSpec.Method.draft;
                            s.serving.speculative.draftModel = new ModelSpec();
                            s.serving.speculative.draftModel.name = "org/small";
                            s.serving.speculative.draftModel.source = "s3://bucket/small";
                        },
                        "spec.serving.speculative.draftModel.source in body should match"),
                Arguments.of(
                        "hf-source-with-three-parts",
                        (Consumer<InferenceDeploymentSpec>) s -> s.model.source = "hf://a/b/c",
                        "spec.model.source in body should match"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalid")
    void rejectsInvalidSpecWithSchemaMessage(
            String name,
            Consumer<InferenceDeploymentSpec> breakIt,
            String message,
            KubernetesClient client,
            TestNamespace ns) {
        InferenceDeployment d = valid(name);
        breakIt.accept(d.getSpec());
        assertThatThrownBy(() -> client.resources(InferenceDeployment.class)
                        .inNamespace(ns.name())
                        .resource(d)
                        .create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getMessage()).contains(message);
                });
        assertThat(client.resources(InferenceDeployment.class)
                        .inNamespace(ns.name())
                        .withName(name)
                        .get())
                .isNull();
    }

    /** What a user sees: the machine's kubectl (1.32 client) against the 1.20 server. */
    @Test
    void kubectlApplyOfAnInvalidSpecFailsWithTheSchemaMessage(LocalCluster cluster, TestNamespace ns) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/kubectl")), "no /usr/bin/kubectl");
        InferenceDeployment d = valid("via-kubectl");
        d.getSpec().memory.fraction = "1.5";
        Process p = new ProcessBuilder(
                        "/usr/bin/kubectl",
                        "--kubeconfig",
                        cluster.kubeconfig().toString(),
                        "-n",
                        ns.name(),
                        "apply",
                        "-f",
                        "-")
                .redirectErrorStream(true)
                .start();
        try (var in = p.getOutputStream()) {
            in.write(io.fabric8.kubernetes.client.utils.Serialization.asYaml(d)
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as(out).isNotZero();
        assertThat(out).contains("spec.memory.fraction in body should match '^(auto|0\\.[0-9]{1,4})$'");
    }

    @Test
    void acceptsValidSpecAndAppliesDefaults(KubernetesClient client, TestNamespace ns) {
        var created = client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .resource(valid("ok"))
                .create();
        assertThat(created.getMetadata().getUid()).isNotBlank();
        var read = client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName("ok")
                .get();
        assertThat(read.getSpec().parallelism.tensor).isEqualTo(2);
        assertThat(read.getSpec().memory.fraction).isEqualTo("auto");
    }
    /** A minimal manifest (no engine, memory, rollout… objects): the apiserver fills the whole documented defaults in. */
    @Test
    @SuppressWarnings("unchecked")
    void minimalManifestGetsEveryDefaultFromTheApiserver(KubernetesClient client, TestNamespace ns) {
        var api = client.genericKubernetesResources(
                        InferenceDeployment.GROUP + "/" + InferenceDeployment.VERSION, "InferenceDeployment")
                .inNamespace(ns.name());
        var minimal = new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
                .withApiVersion(InferenceDeployment.GROUP + "/" + InferenceDeployment.VERSION)
                .withKind("InferenceDeployment")
                .withNewMetadata()
                .withName("minimal")
                .endMetadata()
                .addToAdditionalProperties(
                        "spec",
                        java.util.Map.of(
                                "model",
                                        java.util.Map.of(
                                                "name",
                                                "m",
                                                "weightBytes",
                                                1000,
                                                "geometry",
                                                java.util.Map.of(
                                                        "layers",
                                                        2,
                                                        "hiddenSize",
                                                        64,
                                                        "attentionHeads",
                                                        4,
                                                        "kvHeads",
                                                        4)),
                                "parallelism", java.util.Map.of("tensor", 2)))
                .build();
        api.resource(minimal).create();
        var spec = (java.util.Map<String, Object>)
                api.withName("minimal").get().getAdditionalProperties().get("spec");

        assertThat((java.util.Map<String, Object>) spec.get("engine")).containsEntry("type", "Tensorlane");
        assertThat((java.util.Map<String, Object>) spec.get("memory"))
                .containsEntry("fraction", "auto")
                .containsEntry("reserveMiB", 512);
        assertThat((java.util.Map<String, Object>) spec.get("allreduce")).containsEntry("mode", "Auto");
        assertThat((java.util.Map<String, Object>)
                        ((java.util.Map<String, Object>) spec.get("rollout")).get("autoRollback"))
                .containsEntry("enabled", true)
                .containsEntry("maxAttempts", 3);
        assertThat(spec).containsEntry("replicas", 1);
        assertThat((java.util.Map<String, Object>) spec.get("serving")).containsEntry("kvCacheDtype", "auto");
    }

    /** An enum the typed client cannot even write: spec.serving.kvCacheDtype outside auto / bf16 / fp16 / fp8. */
    @Test
    @SuppressWarnings("unchecked")
    void rejectsAKvCacheDtypeOutsideTheEnum(KubernetesClient client, TestNamespace ns) {
        var api = client.genericKubernetesResources(
                        InferenceDeployment.GROUP + "/" + InferenceDeployment.VERSION, "InferenceDeployment")
                .inNamespace(ns.name());
        var d = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(
                io.fabric8.kubernetes.client.utils.Serialization.asJson(valid("kv-int8")),
                io.fabric8.kubernetes.api.model.GenericKubernetesResource.class);
        var spec = (java.util.Map<String, Object>) d.getAdditionalProperties().get("spec");
        spec.put("serving", java.util.Map.of("kvCacheDtype", "int8"));
        assertThatThrownBy(() -> api.resource(d).create())
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                    assertThat(e.getCode()).isEqualTo(422);
                    assertThat(e.getMessage())
                            .contains("spec.serving.kvCacheDtype")
                            .contains("Unsupported value: \"int8\"")
                            .contains("\"auto\", \"bf16\", \"fp16\", \"fp8\"");
                });
        assertThat(api.withName("kv-int8").get()).isNull();
        spec.put("serving", java.util.Map.of("kvCacheDtype", "fp8"));
        assertThat(api.resource(d).create().getMetadata().getUid()).isNotBlank();
    }
}
