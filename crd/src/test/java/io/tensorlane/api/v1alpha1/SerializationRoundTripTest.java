package io.tensorlane.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Sample YAMLs (this module's full samples and the user-facing manifests/samples) survive YAML -> Java -> YAML
 * without losing or renaming a field, so what users write is what the operator reads.
 */
class SerializationRoundTripTest {
    private static final ObjectMapper JSON = Serialization.jsonMapper();
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    static {
        SERIALIZATION.registerKubernetesResource(InferenceDeployment.class);
        SERIALIZATION.registerKubernetesResource(GpuTopology.class);
    }

    static Stream<Path> samples() throws IOException {
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(Path.of("src/test/resources/samples"))) {
            s.forEach(files::add);
        }
        Path manifests = GeneratedCrds.repoRoot().resolve("manifests/samples");
        if (Files.isDirectory(manifests)) {
            try (Stream<Path> s = Files.list(manifests)) {
                s.filter(p -> p.toString().endsWith(".yaml") && !p.endsWith("kustomization.yaml"))
                        .forEach(files::add);
            }
        }
        return files.stream().sorted();
    }

    @ParameterizedTest
    @MethodSource("samples")
    void roundTripKeepsEveryField(Path file) throws IOException {
        String text = Files.readString(file);
        Object loaded = SERIALIZATION.unmarshal(text);
        List<HasMetadata> objects = loaded instanceof List<?> l
                ? l.stream().map(HasMetadata.class::cast).toList()
                : List.of((HasMetadata) loaded);
        List<JsonNode> raw = readAllDocuments(text);
        assertThat(objects).hasSameSizeAs(raw);
        for (int i = 0; i < objects.size(); i++) {
            HasMetadata obj = objects.get(i);
            assertThat((Object) obj)
                    .as("%s document %d is typed", file, i)
                    .isInstanceOfAny(InferenceDeployment.class, GpuTopology.class);
            JsonNode typed = JSON.valueToTree(obj);
            assertContained(raw.get(i), typed, "");
            HasMetadata again = SERIALIZATION.unmarshal(SERIALIZATION.asYaml(obj), obj.getClass());
            assertThat((JsonNode) JSON.valueToTree(again))
                    .as("second round trip of %s", file)
                    .isEqualTo(typed);
        }
    }

    private static List<JsonNode> readAllDocuments(String text) {
        List<JsonNode> docs = new ArrayList<>();
        for (String doc : text.split("(?m)^---\\s*$")) {
            if (!doc.isBlank()) {
                docs.add(JSON.valueToTree(Serialization.unmarshal(doc, Map.class)));
            }
        }
        return docs;
    }

    /** Every field in the raw document is present in the typed object with the same value. */
    private static void assertContained(JsonNode raw, JsonNode typed, String path) {
        if (raw.isObject()) {
            assertThat(typed.isObject())
                    .as("%s is an object after round trip", path)
                    .isTrue();
            for (Iterator<Map.Entry<String, JsonNode>> it = raw.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                assertThat(typed.has(e.getKey()))
                        .as("field %s.%s survives", path, e.getKey())
                        .isTrue();
                assertContained(e.getValue(), typed.get(e.getKey()), path + "." + e.getKey());
            }
        } else if (raw.isArray()) {
            assertThat(typed.size()).as("%s length", path).isEqualTo(raw.size());
            for (int i = 0; i < raw.size(); i++) {
                assertContained(raw.get(i), typed.get(i), path + "[" + i + "]");
            }
        } else if (raw.isNumber()) {
            assertThat(typed.decimalValue().compareTo(raw.decimalValue()))
                    .as("%s", path)
                    .isZero();
        } else {
            assertThat(typed.asText()).as("%s", path).isEqualTo(raw.asText());
        }
    }
}
