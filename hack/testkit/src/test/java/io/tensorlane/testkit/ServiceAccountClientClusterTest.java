package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import org.junit.jupiter.api.Test;

/** RBAC is enforced and ServiceAccount tokens work: the basis of the least-privilege tests. */
@WithLocalCluster
class ServiceAccountClientClusterTest {
    @Test
    void serviceAccountClientCanDoWhatItsRoleAllowsAndNothingElse(
            KubernetesClient admin, TestNamespace ns, LocalCluster cluster) {
        admin.serviceAccounts()
                .inNamespace(ns.name())
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("reader")
                        .endMetadata()
                        .build())
                .create();
        admin.rbac()
                .roles()
                .inNamespace(ns.name())
                .resource(new RoleBuilder()
                        .withNewMetadata()
                        .withName("pod-reader")
                        .endMetadata()
                        .addNewRule()
                        .withApiGroups("")
                        .withResources("pods")
                        .withVerbs("get", "list", "watch")
                        .endRule()
                        .build())
                .create();
        admin.rbac()
                .roleBindings()
                .inNamespace(ns.name())
                .resource(new RoleBindingBuilder()
                        .withNewMetadata()
                        .withName("reader")
                        .endMetadata()
                        .withNewRoleRef("rbac.authorization.k8s.io", "Role", "pod-reader")
                        .addNewSubject()
                        .withKind("ServiceAccount")
                        .withName("reader")
                        .withNamespace(ns.name())
                        .endSubject()
                        .build())
                .create();

        try (KubernetesClient reader = cluster.clientAs(admin, ns.name(), "reader")) {
            assertThat(reader.pods().inNamespace(ns.name()).list().getItems()).isEmpty();
            assertThatThrownBy(() -> reader.secrets().inNamespace(ns.name()).list())
                    .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(403);
                        assertThat(e.getMessage()).contains("system:serviceaccount:" + ns.name() + ":reader");
                    });
            assertThatThrownBy(() -> reader.nodes().list())
                    .isInstanceOfSatisfying(
                            KubernetesClientException.class,
                            e -> assertThat(e.getCode()).isEqualTo(403));
        }
    }
}
