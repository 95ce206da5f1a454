package io.tensorlane.runtime.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
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
  static String node;
  static String binding;

  @BeforeAll
  static void bindProbeRole(KubernetesClient admin, TestNamespace ns) throws Exception {
    node = "gpu-" + ns.name();
    binding = "probe-test-" + ns.name();
    try (InputStream in = Files.newInputStream(RepoRoot.require().resolve("manifests/probe/rbac.yaml"))) {
      List<HasMetadata> items = admin.load(in).items();
      ClusterRole role = items.stream().filter(ClusterRole.class::isInstance).map(ClusterRole.class::cast).findFirst().orElseThrow();
      admin.resource(role).fieldManager("test").forceConflicts().serverSideApply();
      admin.serviceAccounts().inNamespace(ns.name()).resource(new ServiceAccountBuilder().withNewMetadata().withName(SA)
          .endMetadata().build()).create();
      admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(binding)
          .endMetadata().withNewRoleRef("rbac.authorization.k8s.io", "ClusterRole", role.getMetadata().getName())
          .addNewSubject().withKind("ServiceAccount").withName(SA).withNamespace(ns.name()).endSubject().build()).create();
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
      GpuTopology stored = admin.resources(GpuTopology.class).withName(node).get();
      assertThat(stored.getSpec().nodeName).isEqualTo(node);
      assertThat(stored.getMetadata().getLabels()).containsAllEntriesOf(Publisher.LABELS);
      assertThat(stored.getStatus().summary.interconnect).isEqualTo(Interconnect.PCIe);
      assertThat(stored.getStatus().summary.islands).hasSize(2);
      assertThat(stored.getStatus().links).hasSize(28);
      assertThat(stored.getMetadata().getManagedFields()).extracting(ManagedFieldsEntry::getManager)
          .contains(Publisher.FIELD_MANAGER);

      GpuTopologyStatus next = TopologyFixtures.load(TopologyFixtures.H200_SXM_8);
      new Publisher(probe).publish(node, next);
      GpuTopology updated = admin.resources(GpuTopology.class).withName(node).get();
      assertThat(updated.getStatus().summary.interconnect).isEqualTo(Interconnect.NVLink);
      assertThat(updated.getStatus().gpus).extracting(g -> g.product).containsOnly("NVIDIA H200");
      assertThat(updated.getStatus().summary.islands).hasSize(1);
    }
  }

  @Test
  void probeRoleIsLeastPrivilege(KubernetesClient admin, LocalCluster cluster, TestNamespace ns) {
    try (KubernetesClient probe = cluster.clientAs(admin, ns.name(), SA)) {
      new Publisher(probe).publish(node, TopologyFixtures.load(TopologyFixtures.L40S_2));
      assertThatThrownBy(() -> probe.resources(GpuTopology.class).withName(node).delete())
          .isInstanceOf(KubernetesClientException.class).extracting(e -> ((KubernetesClientException) e).getCode())
          .isEqualTo(403);
      assertThatThrownBy(() -> probe.resources(GpuTopology.class).list())
          .isInstanceOf(KubernetesClientException.class).extracting(e -> ((KubernetesClientException) e).getCode())
          .isEqualTo(403);
    }
  }

  @Test
  void refusalIsOneLineWithExitCode(KubernetesClient admin, LocalCluster cluster, TestNamespace ns) {
    try (KubernetesClient nobody = cluster.clientAs(admin, ns.name(), "default")) {
      assertThatThrownBy(() -> new Publisher(nobody).publish(node, TopologyFixtures.load(TopologyFixtures.L40S_2)))
          .isInstanceOf(ProbeException.class)
          .hasMessageStartingWith("cannot publish GpuTopology/" + node + ": HTTP 403")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"))
          .extracting(e -> ((ProbeException) e).kind()).isEqualTo(ProbeException.Kind.PUBLISH_FAILED);
    }
  }
}
