package io.tensorlane.testkit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Installs Tensorlane's CRDs: from {@code manifests/crds/*.yaml} (what users apply) when the checkout has them,
 * otherwise from the crd module's generated {@code META-INF/fabric8/*-v1.yml} on the classpath.
 */
public final class Crds {
    static final List<String> CLASSPATH = List.of(
            "META-INF/fabric8/inferencedeployments.tensorlane.io-v1.yml",
            "META-INF/fabric8/gputopologies.tensorlane.io-v1.yml");

    private Crds() {}

    /** Server-side applies every CRD and waits until each is Established; returns their names. */
    public static List<String> install(KubernetesClient client) {
        List<CustomResourceDefinition> crds = load(client);
        if (crds.isEmpty()) {
            throw new IllegalStateException("no Tensorlane CRDs found in manifests/crds nor on the classpath ("
                    + CLASSPATH + "); build the crd module first");
        }
        List<String> names = new ArrayList<>();
        for (CustomResourceDefinition crd : crds) {
            crd.getMetadata().setResourceVersion(null);
            client.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .resource(crd)
                    .fieldManager("tensorlane-testkit")
                    .forceConflicts()
                    .serverSideApply();
            names.add(crd.getMetadata().getName());
        }
        for (String name : names) {
            client.apiextensions()
                    .v1()
                    .customResourceDefinitions()
                    .withName(name)
                    .waitUntilCondition(
                            c -> c != null
                                    && c.getStatus() != null
                                    && c.getStatus().getConditions() != null
                                    && c.getStatus().getConditions().stream()
                                            .anyMatch(k ->
                                                    "Established".equals(k.getType()) && "True".equals(k.getStatus())),
                            60,
                            TimeUnit.SECONDS);
        }
        return names;
    }

    static List<CustomResourceDefinition> load(KubernetesClient client) {
        List<CustomResourceDefinition> out = new ArrayList<>();
        Path dir = RepoRoot.find()
                .map(r -> r.resolve("manifests/crds"))
                .filter(Files::isDirectory)
                .orElse(null);
        if (dir != null) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".yaml") && !p.endsWith("kustomization.yaml"))
                        .sorted()
                        .toList()) {
                    try (InputStream in = Files.newInputStream(f)) {
                        collect(client.load(in).items(), out);
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + dir, e);
            }
        }
        if (out.isEmpty()) {
            for (String res : CLASSPATH) {
                try (InputStream in = Crds.class.getClassLoader().getResourceAsStream(res)) {
                    if (in != null) {
                        collect(client.load(in).items(), out);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read classpath " + res, e);
                }
            }
        }
        return out;
    }

    private static void collect(List<HasMetadata> items, List<CustomResourceDefinition> out) {
        items.stream()
                .filter(CustomResourceDefinition.class::isInstance)
                .map(CustomResourceDefinition.class::cast)
                .forEach(out::add);
    }
}
