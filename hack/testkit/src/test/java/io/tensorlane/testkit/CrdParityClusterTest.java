package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every InferenceDeployment we ship or test against a schema is accepted or rejected by Kubernetes 1.36's CRD server
 * exactly as by 1.20: the samples of {@code manifests/samples}, the Argo CD health-check inputs of
 * {@code manifests/argocd/testdata}, and the fixtures of {@link InferenceDeploymentSchemaClusterTest}. Each is created
 * with {@code dryRun=All} on both servers; a rejection must name the same fields for the same reasons (and carry the
 * message that the schema test expects), an acceptance must store the same spec (defaulting and pruning agree).
 */
@WithLocalCluster
@ExtendWith(CrdServers.Extension.class)
class CrdParityClusterTest {
    static final ResourceDefinitionContext INFD = new ResourceDefinitionContext.Builder()
            .withGroup(InferenceDeployment.GROUP)
            .withVersion(InferenceDeployment.VERSION)
            .withKind("InferenceDeployment")
            .withPlural("inferencedeployments")
            .withNamespaced(true)
            .build();

    /** What a server said to a dry-run create. */
    record Verdict(boolean accepted, Object spec, int code, TreeSet<String> causes, String message) {
        static Verdict of(CrdServers.Server server, String namespace, GenericKubernetesResource object) {
            GenericKubernetesResource copy = Serialization.clone(object);
            copy.getMetadata().setNamespace(namespace);
            try {
                GenericKubernetesResource stored = server.client()
                        .genericKubernetesResources(INFD)
                        .inNamespace(namespace)
                        .resource(copy)
                        .dryRun()
                        .create();
                return new Verdict(true, stored.getAdditionalProperties().get("spec"), 201, new TreeSet<>(), "");
            } catch (KubernetesClientException e) {
                TreeSet<String> causes = new TreeSet<>();
                if (e.getStatus() != null && e.getStatus().getDetails() != null) {
                    for (StatusCause c : e.getStatus().getDetails().getCauses()) {
                        causes.add(c.getField() + " " + c.getReason());
                    }
                }
                return new Verdict(false, null, e.getCode(), causes, e.getMessage());
            }
        }
    }

    static GenericKubernetesResource generic(Object typedOrYaml) {
        String json = typedOrYaml instanceof String yaml
                ? Serialization.asJson(Serialization.unmarshal(yaml, Object.class))
                : Serialization.asJson(typedOrYaml);
        return Serialization.unmarshal(json, GenericKubernetesResource.class);
    }

    static List<Path> yamlFiles(String dir) {
        try (Stream<Path> files = Files.list(RepoRoot.require().resolve(dir))) {
            return files.filter(p -> p.toString().endsWith(".yaml") && !p.endsWith("kustomization.yaml"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static GenericKubernetesResource fromFile(Path file) {
        try {
            GenericKubernetesResource r = generic(Files.readString(file));
            r.getMetadata().setNamespace(null); // each test namespace instead
            return r;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** name, object, expected: "accept", a message the rejection must contain, or null (whatever 1.20 says). */
    static Stream<Arguments> fixtures() {
        List<Arguments> out = new ArrayList<>();
        for (Path f : yamlFiles("manifests/samples")) {
            out.add(Arguments.of("sample " + f.getFileName(), fromFile(f), "accept"));
        }
        for (Path f : yamlFiles("manifests/argocd/testdata")) {
            out.add(Arguments.of("argocd " + f.getFileName(), fromFile(f), null));
        }
        out.add(Arguments.of("schema test valid", generic(InferenceDeploymentSchemaClusterTest.valid("ok")), "accept"));
        InferenceDeploymentSchemaClusterTest.invalid().forEach(a -> {
            Object[] args = a.get();
            InferenceDeployment d = InferenceDeploymentSchemaClusterTest.valid((String) args[0]);
            @SuppressWarnings("unchecked")
            Consumer<InferenceDeploymentSpec> breakIt = (Consumer<InferenceDeploymentSpec>) args[1];
            breakIt.accept(d.getSpec());
            out.add(Arguments.of("schema test " + args[0], generic(d), args[2]));
        });
        out.add(Arguments.of("minimal manifest", generic(minimal()), "accept"));
        for (String dtype : List.of("int8", "fp8")) {
            GenericKubernetesResource d = generic(InferenceDeploymentSchemaClusterTest.valid("kv-" + dtype));
            spec(d).put("serving", Map.of("kvCacheDtype", dtype));
            out.add(Arguments.of(
                    "kvCacheDtype " + dtype,
                    d,
                    dtype.equals("fp8") ? "accept" : "spec.serving.kvCacheDtype: Unsupported value: \"int8\""));
        }
        GenericKubernetesResource unknown = generic(InferenceDeploymentSchemaClusterTest.valid("unknown-field"));
        spec(unknown).put("notInTheSchema", "pruned");
        out.add(Arguments.of("unknown field (pruned)", unknown, "accept"));
        return out.stream();
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> spec(GenericKubernetesResource r) {
        return (Map<String, Object>) r.getAdditionalProperties().get("spec");
    }

    /** The minimal manifest of the schema test: every other field comes from the schema's defaults. */
    static String minimal() {
        return """
                apiVersion: tensorlane.io/v1alpha1
                kind: InferenceDeployment
                metadata: {name: minimal}
                spec:
                  model: {name: m, weightBytes: 1000, geometry: {layers: 2, hiddenSize: 64, attentionHeads: 4, kvHeads: 4}}
                  parallelism: {tensor: 2}
                """;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("fixtures")
    void sameVerdictOnBothServers(
            String name, GenericKubernetesResource object, String expected, CrdServers servers, TestNamespace ns) {
        List<CrdServers.Server> both = servers.both();
        Verdict legacy = Verdict.of(both.get(0), ns.name(), object);
        Verdict current = Verdict.of(both.get(1), ns.name(), object);
        String both2 = "\n1.20: " + legacy + "\n1.36: " + current;
        assertThat(current.accepted()).as("accepted on 1.36 as on 1.20" + both2).isEqualTo(legacy.accepted());
        if (legacy.accepted()) {
            assertThat(current.spec())
                    .as("stored spec (defaults, pruning)" + both2)
                    .isEqualTo(legacy.spec());
        } else {
            assertThat(current.code()).as(both2).isEqualTo(legacy.code()).isEqualTo(422);
            assertThat(current.causes())
                    .as("rejected fields and reasons" + both2)
                    .isEqualTo(legacy.causes());
        }
        if ("accept".equals(expected)) {
            assertThat(legacy.accepted()).as(both2).isTrue();
        } else if (expected != null) {
            assertThat(legacy.accepted()).as(both2).isFalse();
            assertThat(legacy.message()).as("1.20").contains(expected);
            assertThat(current.message()).as("1.36").contains(expected);
        }
        if (name.startsWith("unknown field")) {
            assertThat(((Map<?, ?>) current.spec()).containsKey("notInTheSchema"))
                    .isFalse();
        }
    }

    /** The fixture list is not silently empty: every sample and every schema-test case is in it. */
    @Test
    void everySampleAndSchemaFixtureIsCompared() {
        List<String> names = fixtures().map(a -> (String) a.get()[0]).toList();
        assertThat(names.stream().filter(n -> n.startsWith("sample ")))
                .hasSize(yamlFiles("manifests/samples").size());
        assertThat(yamlFiles("manifests/samples")).hasSizeGreaterThanOrEqualTo(4);
        assertThat(names.stream().filter(n -> n.startsWith("schema test ")))
                .hasSize(
                        1 + (int) InferenceDeploymentSchemaClusterTest.invalid().count());
    }
}
