package io.tensorlane.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.client.CustomResource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.FieldSource;
import org.junit.jupiter.params.provider.MethodSource;

/** What the apiserver will enforce at apply time, read from the generated schema. */
class CrdSchemaTest {
    static final List<Class<? extends CustomResource<?, ?>>> kinds = GeneratedCrds.KINDS;

    private static JSONSchemaProps root(Class<? extends CustomResource<?, ?>> kind) {
        return GeneratedCrds.generated(kind)
                .getSpec()
                .getVersions()
                .get(0)
                .getSchema()
                .getOpenAPIV3Schema();
    }

    private static JSONSchemaProps at(JSONSchemaProps schema, String path) {
        JSONSchemaProps cur = schema;
        for (String part : path.split("\\.")) {
            if (part.equals("[]")) {
                cur = cur.getItems().getSchema();
            } else {
                assertThat(cur.getProperties())
                        .as("property %s in %s", part, path)
                        .containsKey(part);
                cur = cur.getProperties().get(part);
            }
        }
        return cur;
    }

    /** Every field under spec and status of our own types carries a description (kubectl explain quality). */
    @ParameterizedTest
    @FieldSource("kinds")
    void everyFieldIsDescribed(Class<? extends CustomResource<?, ?>> kind) {
        List<String> missing = new ArrayList<>();
        JSONSchemaProps r = root(kind);
        for (String top : List.of("spec", "status")) {
            collectUndescribed(top, r.getProperties().get(top), missing);
        }
        assertThat(missing)
                .as("fields without description in %s", kind.getSimpleName())
                .isEmpty();
    }

    private static void collectUndescribed(String path, JSONSchemaProps s, List<String> missing) {
        if (s == null) {
            return;
        }
        if (s.getDescription() == null || s.getDescription().isBlank()) {
            missing.add(path);
        }
        // Embedded Kubernetes types (EnvVar, Toleration, Condition) are described upstream, not by us.
        if (isEmbeddedKubernetesType(path)) {
            return;
        }
        if (s.getProperties() != null) {
            s.getProperties().forEach((k, v) -> collectUndescribed(path + "." + k, v, missing));
        }
        if (s.getItems() != null && s.getItems().getSchema() != null) {
            JSONSchemaProps item = s.getItems().getSchema();
            if (item.getProperties() != null) {
                item.getProperties().forEach((k, v) -> collectUndescribed(path + "[]." + k, v, missing));
            }
        }
    }

    private static boolean isEmbeddedKubernetesType(String path) {
        return path.endsWith(".env") || path.endsWith(".tolerations") || path.endsWith(".conditions");
    }

    static Stream<Arguments> constraints() {
        return Stream.of(
                Arguments.of("spec.parallelism.tensor", 1.0, 8.0, null),
                Arguments.of("spec.replicas", 0.0, 1000.0, null),
                Arguments.of("spec.model.weightBytes", 1.0, null, null),
                Arguments.of("spec.model.geometry.layers", 1.0, 1024.0, null),
                Arguments.of("spec.allreduce.maxMessageBytes", 4096.0, 1073741824.0, null),
                Arguments.of("spec.memory.fraction", null, null, "^(auto|0\\.[0-9]{1,4})$"),
                Arguments.of("spec.memory.reserveMiB", 0.0, 65536.0, null),
                Arguments.of("spec.rollout.progressDeadlineSeconds", 30.0, 86400.0, null),
                Arguments.of("spec.rollout.autoRollback.maxAttempts", 0.0, 20.0, null),
                Arguments.of("spec.model.name", null, null, "^[A-Za-z0-9][A-Za-z0-9._/-]{0,252}$"),
                Arguments.of("spec.model.source", null, null, io.tensorlane.modelfacts.ModelSource.PATTERN),
                Arguments.of("spec.serving.speculative.numSpeculativeTokens", 1.0, 8.0, null),
                Arguments.of("spec.serving.speculative.promptLookupMax", 1.0, 8.0, null),
                Arguments.of("spec.serving.speculative.disableByBatchSize", 2.0, 4096.0, null),
                Arguments.of(
                        "spec.model.storage.sizeLimit", null, null, "^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$"));
    }

    @ParameterizedTest
    @MethodSource("constraints")
    void numericAndPatternConstraintsAreInTheSchema(String path, Double min, Double max, String pattern) {
        JSONSchemaProps p = at(root(InferenceDeployment.class), path);
        assertThat(p.getMinimum()).as("%s minimum", path).isEqualTo(min);
        assertThat(p.getMaximum()).as("%s maximum", path).isEqualTo(max);
        assertThat(p.getPattern()).as("%s pattern", path).isEqualTo(pattern);
    }

    static Stream<Arguments> enums() {
        return Stream.of(
                Arguments.of("spec.engine.type", List.of("Tensorlane", "SGLang", "VLLM"), "Tensorlane"),
                Arguments.of("spec.placement.interconnect", List.of("Any", "NVLink", "PCIe"), "Any"),
                Arguments.of("spec.allreduce.mode", List.of("Auto", "Custom", "NCCL"), "Auto"),
                Arguments.of("spec.allreduce.algorithm", List.of("Auto", "OneStage", "TwoStage", "Ring"), "Auto"),
                Arguments.of("spec.model.dtype", List.of("bf16", "fp16", "fp8", "fp32"), null),
                Arguments.of("spec.serving.kvCacheDtype", List.of("auto", "bf16", "fp16", "fp8"), "auto"),
                Arguments.of("spec.serving.speculative.method", List.of("ngram", "draft"), null),
                Arguments.of(
                        "status.model.quantization.weights",
                        List.of("FP8Block", "FP8Channel", "FP8Tensor", "Other"),
                        null));
    }

    @ParameterizedTest
    @MethodSource("enums")
    void enumsAndDefaultsAreInTheSchema(String path, List<String> values, String dflt) {
        JSONSchemaProps p = at(root(InferenceDeployment.class), path);
        assertThat(p.getEnum()).extracting(j -> j.asText()).containsExactlyInAnyOrderElementsOf(values);
        if (dflt == null) { // no schema default: the operator fills it (spec.model.dtype: from status.model)
            assertThat(p.getDefault()).as("%s default", path).isNull();
        } else {
            assertThat(p.getDefault().asText()).isEqualTo(dflt);
        }
    }

    @Test
    void tokenSecretKeyDefaultsToToken() {
        assertThat(at(root(InferenceDeployment.class), "spec.model.tokenSecret.key")
                        .getDefault()
                        .asText())
                .isEqualTo("token");
    }

    @Test
    void requiredFields() {
        JSONSchemaProps r = root(InferenceDeployment.class);
        assertThat(r.getRequired()).contains("spec");
        assertThat(at(r, "spec").getRequired()).containsExactlyInAnyOrder("model", "parallelism");
        assertThat(at(r, "spec.model").getRequired()).containsExactlyInAnyOrder("name");
        assertThat(at(r, "spec.model.tokenSecret").getRequired()).containsExactly("name");
        assertThat(at(r, "spec.serving.speculative").getRequired()).containsExactly("method");
        assertThat(at(r, "spec.model.geometry").getRequired())
                .containsExactlyInAnyOrder("layers", "hiddenSize", "attentionHeads", "kvHeads");
    }

    static Stream<Arguments> columns() {
        return Stream.of(
                Arguments.of(
                        InferenceDeployment.class,
                        List.of(
                                "Engine",
                                "TP",
                                "Ready",
                                "Replicas",
                                "Interconnect",
                                "Allreduce",
                                "MemFraction",
                                "Phase",
                                "Age")),
                Arguments.of(GpuTopology.class, List.of("GPUs", "Product", "Interconnect", "P2P", "Source", "Age")));
    }

    @ParameterizedTest
    @MethodSource("columns")
    void printerColumnsInOrderAndResolvable(Class<? extends CustomResource<?, ?>> kind, List<String> names) {
        CustomResourceDefinition crd = GeneratedCrds.generated(kind);
        List<CustomResourceColumnDefinition> cols =
                crd.getSpec().getVersions().get(0).getAdditionalPrinterColumns();
        assertThat(cols).extracting(CustomResourceColumnDefinition::getName).containsExactlyElementsOf(names);
        JSONSchemaProps r = root(kind);
        for (CustomResourceColumnDefinition c : cols) {
            if (!c.getJsonPath().startsWith(".metadata")) {
                assertThat(at(r, c.getJsonPath().substring(1)))
                        .as("column %s path %s", c.getName(), c.getJsonPath())
                        .isNotNull();
            }
        }
    }

    @Test
    void scopesShortNamesAndStatusSubresource() {
        CustomResourceDefinition infd = GeneratedCrds.generated(InferenceDeployment.class);
        assertThat(infd.getSpec().getScope()).isEqualTo("Namespaced");
        assertThat(infd.getSpec().getNames().getShortNames()).containsExactly("infd");
        assertThat(infd.getSpec().getVersions().get(0).getSubresources().getStatus())
                .isNotNull();
        CustomResourceDefinition topo = GeneratedCrds.generated(GpuTopology.class);
        assertThat(topo.getSpec().getScope()).isEqualTo("Cluster");
        assertThat(topo.getSpec().getVersions().get(0).getSubresources().getStatus())
                .isNotNull();
        assertThat(Map.of(
                        "group",
                        infd.getSpec().getGroup(),
                        "version",
                        infd.getSpec().getVersions().get(0).getName()))
                .containsEntry("group", "tensorlane.io")
                .containsEntry("version", "v1alpha1");
    }
}
