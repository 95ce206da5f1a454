package io.tensorlane.api.v1alpha1;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/** manifests/crds must be exactly what the build generates; -Dtensorlane.updateCrds=true rewrites them. */
class CommittedCrdsTest {
    static final java.util.List<Class<? extends CustomResource<?, ?>>> kinds = GeneratedCrds.KINDS;

    @ParameterizedTest
    @FieldSource("kinds")
    void committedCopyIsCurrent(Class<? extends CustomResource<?, ?>> kind) throws IOException {
        CustomResourceDefinition generated = GeneratedCrds.generated(kind);
        Path file = GeneratedCrds.committed(kind);
        if (Boolean.getBoolean("tensorlane.updateCrds")) {
            Files.createDirectories(file.getParent());
            Files.writeString(file, GeneratedCrds.yaml(generated));
        }
        assertThat(file)
                .as("committed CRD %s; regenerate with: mvn -B -pl crd test -Dtensorlane.updateCrds=true", file)
                .exists();
        CustomResourceDefinition committed =
                Serialization.unmarshal(Files.readString(file), CustomResourceDefinition.class);
        assertThat(committed)
                .as(
                        "%s is stale: the API types changed. Regenerate with: mvn -B -pl crd test -Dtensorlane.updateCrds=true",
                        file)
                .isEqualTo(generated);
        assertThat(Files.readString(file)).startsWith(GeneratedCrds.HEADER);
    }
}
