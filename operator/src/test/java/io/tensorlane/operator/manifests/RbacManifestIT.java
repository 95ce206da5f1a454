package io.tensorlane.operator.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * manifests/rbac/operator-rbac.yaml is a copy of the RBAC objects the operator build generates
 * (operator/target/kubernetes/kubernetes.yml, from the quarkus.kubernetes.rbac.* configuration). Compared as objects
 * (fabric8), not as text; build-volatile annotations (app.quarkus.io/*: build time, commit id) are ignored.
 * Refresh: {@code mvn -pl operator verify -Dit.test=RbacManifestIT -Dtensorlane.updateRbac=true}.
 */
class RbacManifestIT {
    static final Set<String> RBAC_KINDS =
            Set.of("ServiceAccount", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding");
    static final String COMMITTED = "manifests/rbac/operator-rbac.yaml";
    static final String GENERATED = "operator/target/kubernetes/kubernetes.yml";

    @Test
    void committedRbacIsTheGeneratedRbac() throws IOException {
        Path generatedFile = Manifests.repo().resolve(GENERATED);
        assertThat(generatedFile)
                .as("%s (made by the operator's package phase)", GENERATED)
                .exists();
        List<HasMetadata> generated = rbacOf(Manifests.parse(Files.readString(generatedFile)));
        assertThat(generated).as("RBAC objects in %s", GENERATED).isNotEmpty();

        Path committedFile = Manifests.repo().resolve(COMMITTED);
        if (Boolean.getBoolean("tensorlane.updateRbac")) {
            String header =
                    "# GENERATED - copied from " + GENERATED + " by RbacManifestIT (-Dtensorlane.updateRbac=true).\n"
                            + "# Do not edit: change the quarkus.kubernetes.rbac.* configuration of the operator instead.\n";
            Files.writeString(
                    committedFile,
                    header
                            + generated.stream()
                                    .map(Manifests.SERIALIZATION::asYaml)
                                    .collect(Collectors.joining()));
        }
        List<HasMetadata> committed = rbacOf(Manifests.parse(Files.readString(committedFile)));
        assertThat(asMaps(committed))
                .as(
                        "%s is stale: refresh it with mvn -pl operator verify -Dit.test=RbacManifestIT -Dtensorlane.updateRbac=true",
                        COMMITTED)
                .isEqualTo(asMaps(generated));
    }

    @Test
    void operatorRbacGrantsNoSecretsAndDeletesOnlyJobs() throws IOException {
        List<HasMetadata> committed =
                rbacOf(Manifests.parse(Files.readString(Manifests.repo().resolve(COMMITTED))));
        List<io.fabric8.kubernetes.api.model.rbac.PolicyRule> rules = committed.stream()
                .filter(io.fabric8.kubernetes.api.model.rbac.ClusterRole.class::isInstance)
                .map(io.fabric8.kubernetes.api.model.rbac.ClusterRole.class::cast)
                .flatMap(r -> r.getRules().stream())
                .toList();
        assertThat(rules).isNotEmpty();
        for (var rule : rules) {
            assertThat(rule.getResources()).as("rule %s", rule).doesNotContain("secrets", "configmaps", "*");
            assertThat(rule.getVerbs())
                    .as("rule %s", rule)
                    .doesNotContain("deletecollection", "*", "escalate", "bind", "impersonate");
            // the one delete: its own preflight Jobs that outlived their deadline (they hold GPUs) or are too old to
            // trust
            if (rule.getVerbs().contains("delete")) {
                assertThat(rule.getApiGroups()).as("rule %s", rule).containsExactly("batch");
                assertThat(rule.getResources()).as("rule %s", rule).containsExactly("jobs");
            }
            assertThat(rule.getApiGroups()).as("rule %s", rule).doesNotContain("*");
        }
    }

    static List<HasMetadata> rbacOf(List<HasMetadata> objects) {
        return objects.stream()
                .filter(o -> RBAC_KINDS.contains(o.getKind()))
                .map(RbacManifestIT::withoutVolatileAnnotations)
                .sorted(Comparator.comparing((HasMetadata o) -> o.getKind())
                        .thenComparing(o -> o.getMetadata().getName()))
                .toList();
    }

    private static HasMetadata withoutVolatileAnnotations(HasMetadata o) {
        ObjectMeta meta = o.getMetadata();
        if (meta.getAnnotations() != null) {
            Map<String, String> kept = new LinkedHashMap<>(meta.getAnnotations());
            kept.keySet().removeIf(k -> k.startsWith("app.quarkus.io/"));
            meta.setAnnotations(kept.isEmpty() ? null : kept);
        }
        return o;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> asMaps(List<HasMetadata> objects) {
        return objects.stream()
                .map(o -> (Map<String, Object>) Manifests.SERIALIZATION.convertValue(o, Map.class))
                .toList();
    }
}
