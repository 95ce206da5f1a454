package io.tensorlane.api.v1alpha1;

import io.fabric8.crd.generator.annotation.AdditionalPrinterColumn;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The CRDs as the build generates them (fabric8 CRD generator, run by the crd module's build) and as they are
 * committed under manifests/crds. The generator sorts printer columns by JSON path; this puts them back in the
 * order the classes declare them, which is the order `kubectl get` shows, and omits zero priorities as the apiserver
 * does.
 */
final class GeneratedCrds {
    static final List<Class<? extends CustomResource<?, ?>>> KINDS =
            List.of(InferenceDeployment.class, GpuTopology.class);
    static final String HEADER = "# Generated from crd/ by the fabric8 CRD generator. Do not edit: run\n"
            + "#   mvn -B -pl crd test -Dtensorlane.updateCrds=true\n";

    private GeneratedCrds() {}

    static String crdName(Class<? extends CustomResource<?, ?>> kind) {
        return CustomResource.getCRDName(kind);
    }

    /** The generated CRD, printer columns in declaration order. */
    static CustomResourceDefinition generated(Class<? extends CustomResource<?, ?>> kind) {
        String resource = "/META-INF/fabric8/" + crdName(kind) + "-v1.yml";
        try (InputStream in = GeneratedCrds.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing: the crd-generator-maven-plugin did not run");
            }
            CustomResourceDefinition crd = Serialization.unmarshal(in, CustomResourceDefinition.class);
            List<String> order = Arrays.stream(kind.getAnnotationsByType(AdditionalPrinterColumn.class))
                    .map(AdditionalPrinterColumn::name)
                    .toList();
            for (CustomResourceDefinitionVersion v : crd.getSpec().getVersions()) {
                List<CustomResourceColumnDefinition> cols = new ArrayList<>(v.getAdditionalPrinterColumns());
                cols.sort((a, b) -> Integer.compare(order.indexOf(a.getName()), order.indexOf(b.getName())));
                // The apiserver drops a zero priority; keeping it would make every re-apply (kubectl, Argo CD, Flux) a
                // change.
                cols.stream()
                        .filter(c -> c.getPriority() != null && c.getPriority() == 0)
                        .forEach(c -> c.setPriority(null));
                v.setAdditionalPrinterColumns(cols);
            }
            return crd;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String yaml(CustomResourceDefinition crd) {
        return HEADER + Serialization.asYaml(crd);
    }

    static Path repoRoot() {
        String root = System.getProperty("tensorlane.repo.root");
        Path p = root != null ? Path.of(root) : Path.of("..");
        if (!Files.isDirectory(p.resolve("manifests"))) {
            throw new IllegalStateException("cannot find the repository root (manifests/) from " + p.toAbsolutePath());
        }
        return p.normalize();
    }

    static Path committed(Class<? extends CustomResource<?, ?>> kind) {
        return repoRoot().resolve("manifests/crds/" + crdName(kind) + ".yaml");
    }
}
