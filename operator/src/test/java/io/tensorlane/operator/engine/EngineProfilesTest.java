package io.tensorlane.operator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.testkit.RepoRoot;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EngineProfilesTest {
    @ParameterizedTest
    @EnumSource(EngineType.class)
    void everyEngineTypeHasItsOwnProfile(EngineType type) {
        EngineProfile p = EngineProfiles.of(type);

        assertThat(p.type()).isEqualTo(type);
        assertThat(p.getClass().getSimpleName()).as("one class per engine").endsWith("Profile");
        assertThat(EngineProfiles.all())
                .filteredOn(o -> o.getClass() == p.getClass())
                .hasSize(1);
    }

    @Test
    void theRegistryCoversTheEngineEnumOfTheGeneratedCrd() throws Exception {
        Map<String, Object> crd;
        try (InputStream in = Files.newInputStream(
                RepoRoot.require().resolve("manifests/crds/inferencedeployments.tensorlane.io.yaml"))) {
            crd = new KubernetesSerialization().unmarshal(in, Map.class);
        }
        List<String> values = enumOf(
                crd,
                "spec",
                "versions",
                0,
                "schema",
                "openAPIV3Schema",
                "properties",
                "spec",
                "properties",
                "engine",
                "properties",
                "type",
                "enum");

        assertThat(values)
                .containsExactlyInAnyOrderElementsOf(
                        Arrays.stream(EngineType.values()).map(Enum::name).toList());
        assertThat(values)
                .allSatisfy(v -> assertThat(
                                EngineProfiles.of(EngineType.valueOf(v)).type().name())
                        .isEqualTo(v));
        assertThat(EngineProfiles.all()).extracting(EngineProfile::type).containsExactly(EngineType.values());
    }

    @Test
    void aSpecWithoutAnEngineGetsTheSchemaDefault() {
        InferenceDeploymentSpec none = new InferenceDeploymentSpec();
        InferenceDeploymentSpec noType = new InferenceDeploymentSpec();
        noType.engine = new EngineSpec();
        noType.engine.type = null;
        InferenceDeploymentSpec vllm = new InferenceDeploymentSpec();
        vllm.engine = new EngineSpec();
        vllm.engine.type = EngineType.VLLM;

        assertThat(EngineProfiles.of((InferenceDeploymentSpec) null).type()).isEqualTo(EngineType.Tensorlane);
        assertThat(EngineProfiles.of(none).type()).isEqualTo(EngineType.Tensorlane);
        assertThat(EngineProfiles.of(noType).type()).isEqualTo(EngineType.Tensorlane);
        assertThat(EngineProfiles.of(vllm).type()).isEqualTo(EngineType.VLLM);
    }

    @SuppressWarnings("unchecked")
    private static List<String> enumOf(Object node, Object... path) {
        Object at = node;
        for (Object key : path) {
            at = key instanceof Integer i ? ((List<Object>) at).get(i) : ((Map<String, Object>) at).get(key);
            assertThat(at).as("CRD path element " + key).isNotNull();
        }
        return (List<String>) at;
    }
}
