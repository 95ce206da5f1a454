package io.tensorlane.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * crd/README.md's field table names every leaf field of InferenceDeployment.spec, so it cannot drift silently. The
 * draft model (spec.serving.speculative.draftModel) is one row: its schema is spec.model's, field for field (checked
 * here), so spec.model's rows document it.
 */
class ReadmeFieldTableTest {
    @Test
    void readmeListsEverySpecField() throws IOException {
        JSONSchemaProps spec = GeneratedCrds.generated(InferenceDeployment.class)
                .getSpec()
                .getVersions()
                .get(0)
                .getSchema()
                .getOpenAPIV3Schema()
                .getProperties()
                .get("spec");
        List<String> leaves = new ArrayList<>();
        collect("spec", spec, leaves);
        assertThat(leaves).hasSizeGreaterThan(30);
        String readme = Files.readString(GeneratedCrds.repoRoot().resolve("crd").resolve("README.md"));
        List<String> missing =
                leaves.stream().filter(p -> !readme.contains("`" + p + "`")).toList();
        assertThat(missing)
                .as("spec fields missing from crd/README.md's field table")
                .isEmpty();
    }

    static JSONSchemaProps spec() {
        return GeneratedCrds.generated(InferenceDeployment.class)
                .getSpec()
                .getVersions()
                .get(0)
                .getSchema()
                .getOpenAPIV3Schema()
                .getProperties()
                .get("spec");
    }

    @Test
    void theDraftModelHasSpecModelsSchemaFieldForField() {
        JSONSchemaProps model = spec().getProperties().get("model");
        JSONSchemaProps draft = spec().getProperties()
                .get("serving")
                .getProperties()
                .get("speculative")
                .getProperties()
                .get("draftModel");
        assertThat(draft.getProperties()).isEqualTo(model.getProperties());
        assertThat(draft.getRequired()).isEqualTo(model.getRequired());
    }

    private static void collect(String path, JSONSchemaProps s, List<String> out) {
        boolean embedded = path.endsWith(".env")
                || path.endsWith(".tolerations")
                || path.equals("spec.serving.speculative.draftModel");
        if (s.getProperties() != null && !s.getProperties().isEmpty() && !embedded) {
            s.getProperties().forEach((k, v) -> collect(path + "." + k, v, out));
        } else {
            out.add(path);
        }
    }
}
