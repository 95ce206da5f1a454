package io.tensorlane.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Argo CD health check (manifests/argocd/health.lua) against the table in manifests/argocd/health_test.yaml
 * (Argo CD's own test format), run by Debian's Lua interpreters: lua5.4 and lua5.1 (Argo CD's gopher-lua speaks 5.1).
 * Missing interpreters: run hack/test-deps.sh.
 */
class ArgoCdHealthCheckTest {
    static final String DIR = "manifests/argocd";
    static final List<String> INTERPRETERS = List.of("lua5.4", "lua5.1");

    @SuppressWarnings("unchecked")
    static Stream<Arguments> cases() {
        Map<String, Object> table = Manifests.yamlFile(DIR + "/health_test.yaml");
        List<Arguments> out = new ArrayList<>();
        for (Map<String, Object> t : (List<Map<String, Object>>) table.get("tests")) {
            Map<String, Object> expected = (Map<String, Object>) t.get("healthStatus");
            for (String lua : INTERPRETERS) {
                out.add(Arguments.of(lua, t.get("inputPath"), expected.get("status"), expected.get("message")));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @MethodSource("cases")
    void healthOfSampleStatus(String lua, String inputPath, String status, String message) throws IOException {
        Path input = Manifests.repo().resolve(DIR).resolve(inputPath);
        // The cases are real InferenceDeployment objects: they must read as the API type.
        InferenceDeployment typed =
                Manifests.SERIALIZATION.unmarshal(Files.newInputStream(input), InferenceDeployment.class);
        assertThat(typed.getMetadata().getName()).as("test data %s", inputPath).isNotBlank();
        JsonNode live = Manifests.SERIALIZATION.unmarshal(Files.newInputStream(input), JsonNode.class);

        String script = "obj = " + LuaLiteral.of(live) + "\n"
                + "local hs = dofile(\"" + DIR + "/health.lua\")\n"
                + "io.write(tostring(hs.status), \"\\n\", tostring(hs.message))\n";
        assertThat(Manifests.which(lua))
                .as("%s on PATH (install with hack/test-deps.sh)", lua)
                .isPresent();
        Manifests.Result r = Manifests.run(List.of(lua, "-"), script, 30).requireSuccess(lua + " health.lua");
        String[] lines = r.stdout().split("\n", 2);
        assertThat(lines).as("health output").hasSize(2);
        assertThat(lines[0]).as("status for %s", inputPath).isEqualTo(status);
        assertThat(lines[1]).as("message for %s", inputPath).isEqualTo(message);
    }

    @Test
    void everyTestDataFileIsACase() {
        Map<String, Object> table = Manifests.yamlFile(DIR + "/health_test.yaml");
        List<String> inputs = cases().map(a -> (String) a.get()[1]).distinct().toList();
        List<String> files = Manifests.files(DIR + "/testdata", ".yaml").stream()
                .map(p -> "testdata/" + p.getFileName())
                .toList();
        assertThat(inputs).containsExactlyInAnyOrderElementsOf(files);
        assertThat(table).containsKey("tests");
    }

    @Test
    void argocdConfigMapCarriesExactlyTheScript() throws IOException {
        ConfigMap cm = Manifests.one(Manifests.kustomize(DIR), ConfigMap.class, "argocd-cm");
        assertThat(cm.getMetadata().getNamespace()).isEqualTo("argocd");
        assertThat(cm.getData()).containsOnlyKeys("resource.customizations.health.tensorlane.io_InferenceDeployment");
        assertThat(cm.getData().get("resource.customizations.health.tensorlane.io_InferenceDeployment"))
                .isEqualTo(Files.readString(Manifests.repo().resolve(DIR + "/health.lua")));
    }
}
