package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.api.v1alpha1.TopologySummary.Interconnect;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.RepoRoot;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.topology.TopologyFixtures;
import java.io.InputStream;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The probe's publisher against a real kube-apiserver, authenticated as a ServiceAccount bound to the probe's
 * ClusterRole from {@code manifests/probe/rbac.yaml} (so the manifest's RBAC is proven sufficient and minimal).
 */
@WithLocalCluster
class PublisherClusterTest {
    static final String SA = "tensorlane-probe";
    /** io.tensorlane.operator.preflight.PreflightRecorder.FIELD_MANAGER (the operator is not a dependency here). */
    static final String PREFLIGHT_MANAGER = "tensorlane-preflight";

    static String node;
    static String binding;

    @BeforeAll
    static void bindProbeRole(KubernetesClient admin, TestNamespace ns) throws Exception {
        node = "gpu-" + ns.name();
        binding = "probe-test-" + ns.name();
        try (InputStream in = Files.newInputStream(RepoRoot.require().resolve("manifests/probe/rbac.yaml"))) {
            List<HasMetadata> items = admin.load(in).items();
            ClusterRole role = items.stream()
                    .filter(ClusterRole.class::isInstance)
                    .map(ClusterRole.class::cast)
                    .findFirst()
                    .orElseThrow();
            admin.resource(role).fieldManager("test").forceConflicts().serverSideApply();
            admin.serviceAccounts()
                    .inNamespace(ns.name())
                    .resource(new ServiceAccountBuilder()
                            .withNewMetadata()
                            .withName(SA)
                            .endMetadata()
                            .build())
                    .create();
            admin.rbac()
                    .clusterRoleBindings()
                    .resource(new ClusterRoleBindingBuilder()
                            .withNewMetadata()
                            .withName(binding)
                            .endMetadata()
                            .withNewRoleRef(
                                    "rbac.authorization.k8s.io",
                                    "ClusterRole",
                                    role.getMetadata().getName())
                            .addNewSubject()
                            .withKind("ServiceAccount")
                            .withName(SA)
                            .withNamespace(ns.name())
                            .endSubject()
                            .build())
                    .create();
        }
    }

    @AfterAll
    static void cleanUp(KubernetesClient admin) {
        admin.resources(GpuTopology.class).withName(node).delete();
        admin.rbac().clusterRoleBindings().withName(binding).delete();
    }

    @Test
    void publishesSpecAndStatusAndUpdatesThem(KubernetesClient admin, LocalCluster cluster, TestNamespace ns) {
        try (KubernetesClient probe = cluster.clientAs(admin, ns.name(), SA)) {
            new Publisher(probe).publish(node, TopologyFixtures.load(TopologyFixtures.RTX_PRO_6000_PCIE_8));
            GpuTopology stored =
                    admin.resources(GpuTopology.class).withName(node).get();
            assertThat(stored.getSpec().nodeName).isEqualTo(node);
            assertThat(stored.getMetadata().getLabels()).containsAllEntriesOf(Publisher.LABELS);
            assertThat(stored.getStatus().summary.interconnect).isEqualTo(Interconnect.PCIe);
            assertThat(stored.getStatus().summary.islands).hasSize(2);
            assertThat(stored.getStatus().links).hasSize(28);
            assertThat(stored.getMetadata().getManagedFields())
                    .extracting(ManagedFieldsEntry::getManager)
                    .contains(Publisher.FIELD_MANAGER);

            GpuTopologyStatus next = TopologyFixtures.load(TopologyFixtures.H200_SXM_8);
            new Publisher(probe).publish(node, next);
            GpuTopology updated =
                    admin.resources(GpuTopology.class).withName(node).get();
            assertThat(updated.getStatus().summary.interconnect).isEqualTo(Interconnect.NVLink);
            assertThat(updated.getStatus().gpus).extracting(g -> g.product).containsOnly("NVIDIA H200");
            assertThat(updated.getStatus().summary.islands).hasSize(1);
        }
    }

    @Test
    void aMeasurementOfAnotherManagerSurvivesAProbePublish(
            KubernetesClient admin, LocalCluster cluster, TestNamespace ns) {
        String name = "gpu-m-" + ns.name();
        try (KubernetesClient probe = cluster.clientAs(admin, ns.name(), SA)) {
            new Publisher(probe).publish(name, TopologyFixtures.load(TopologyFixtures.L40S_2));
            // the operator's preflight (PreflightRecorder) applies status.measurement alone under its own field manager
            Measurement preflight = new Measurement();
            preflight.time = "2026-11-29T10:00:00Z";
            preflight.worldSize = 2;
            preflight.selftestPassed = true;
            GpuTopology patch = new GpuTopology();
            patch.setMetadata(new ObjectMetaBuilder().withName(name).build());
            patch.setSpec(null);
            patch.setStatus(new GpuTopologyStatus());
            patch.getStatus().measurement = preflight;
            admin.resource(patch)
                    .subresource("status")
                    .patch(
                            new PatchContext.Builder()
                                    .withPatchType(PatchType.SERVER_SIDE_APPLY)
                                    .withFieldManager(PREFLIGHT_MANAGER)
                                    .withForce(true)
                                    .build(),
                            patch);

            // a periodic probe --publish --measure: links carry the measured results; a stray measurement is not sent
            GpuTopologyStatus next = PairMeasurement.apply(
                    TopologyFixtures.load(TopologyFixtures.L40S_2),
                    List.of(new PairMeasurement(0, 1, true, 25.1, null)));
            next.measurement = new Measurement();
            next.measurement.time = "2026-11-29T11:00:00Z";
            next.measurement.worldSize = 1;
            new Publisher(probe).publish(name, next);

            GpuTopology stored =
                    admin.resources(GpuTopology.class).withName(name).get();
            assertThat(stored.getStatus().measurement).isNotNull();
            assertThat(stored.getStatus().measurement.time).isEqualTo("2026-11-29T10:00:00Z");
            assertThat(stored.getStatus().measurement.worldSize).isEqualTo(2);
            assertThat(stored.getStatus().measurement.selftestPassed).isTrue();
            assertThat(stored.getStatus().links.get(0).p2pVerified).isTrue();
            assertThat(stored.getStatus().links.get(0).bandwidthGBps).isEqualTo(25.1);
            // (managedFields.subresource only exists from Kubernetes 1.22; the test control plane is 1.20)
            assertThat(stored.getMetadata().getManagedFields())
                    .extracting(ManagedFieldsEntry::getManager)
                    .contains(Publisher.FIELD_MANAGER, PREFLIGHT_MANAGER);
        } finally {
            admin.resources(GpuTopology.class).withName(name).delete();
        }
    }

    @Test
    void probeRoleIsLeastPrivilege(KubernetesClient admin, LocalCluster cluster, TestNamespace ns) {
        try (KubernetesClient probe = cluster.clientAs(admin, ns.name(), SA)) {
            new Publisher(probe).publish(node, TopologyFixtures.load(TopologyFixtures.L40S_2));
            assertThatThrownBy(() ->
                            probe.resources(GpuTopology.class).withName(node).delete())
                    .isInstanceOf(KubernetesClientException.class)
                    .extracting(e -> ((KubernetesClientException) e).getCode())
                    .isEqualTo(403);
            assertThatThrownBy(() -> probe.resources(GpuTopology.class).list())
                    .isInstanceOf(KubernetesClientException.class)
                    .extracting(e -> ((KubernetesClientException) e).getCode())
                    .isEqualTo(403);
        }
    }

    @Test
    void refusalIsOneLineWithExitCode(KubernetesClient admin, LocalCluster cluster, TestNamespace ns) {
        try (KubernetesClient nobody = cluster.clientAs(admin, ns.name(), "default")) {
            assertThatThrownBy(
                            () -> new Publisher(nobody).publish(node, TopologyFixtures.load(TopologyFixtures.L40S_2)))
                    .isInstanceOf(ProbeException.class)
                    .hasMessageStartingWith("cannot publish GpuTopology/" + node + ": HTTP 403")
                    .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"))
                    .extracting(e -> ((ProbeException) e).kind())
                    .isEqualTo(ProbeException.Kind.PUBLISH_FAILED);
        }
    }
}
