package io.tensorlane.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.tensorlane.api.v1alpha1.GpuTopology;
import io.tensorlane.api.v1alpha1.GpuTopologySpec;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.InferenceDeploymentStatus;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.topology.TopologyFixtures;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The status subresource and server-side apply behave on Kubernetes 1.36's CRD server as the operator relies on, and as
 * on 1.20: every check runs on both servers. The operator writes status only through the status subresource
 * (server-side apply of {@code status} alone, forced, on condition of the resourceVersion read: {@code StatusWrites.apply},
 * {@code PreflightRecorder}; a JSON merge patch of conditions: {@code GpuTopologyNodeLabeller}), reads
 * {@code metadata.generation} to tell spec changes from status changes, and users apply specs server-side.
 */
@WithLocalCluster
@ExtendWith(CrdServers.Extension.class)
class CrdStatusAndApplyClusterTest {
    static final String OPERATOR = "tensorlane-operator";

    static PatchContext apply(String manager, boolean force) {
        return new PatchContext.Builder()
                .withPatchType(PatchType.SERVER_SIDE_APPLY)
                .withFieldManager(manager)
                .withForce(force)
                .build();
    }

    /** The operator's status write, as StatusWrites.apply does it. */
    static InferenceDeployment applyStatus(KubernetesClient c, String ns, String name, InferenceDeploymentStatus s) {
        InferenceDeployment fresh = new InferenceDeployment();
        fresh.getMetadata().setName(name);
        fresh.getMetadata().setNamespace(ns);
        fresh.setSpec(null);
        fresh.setStatus(s);
        return c.resource(fresh).subresource("status").patch(apply(OPERATOR, true), fresh);
    }

    static InferenceDeploymentStatus status(Phase phase, long observedGeneration) {
        var s = new InferenceDeploymentStatus();
        s.phase = phase;
        s.observedGeneration = observedGeneration;
        s.conditions = List.of(new ConditionBuilder()
                .withType("Ready")
                .withStatus(phase == Phase.Ready ? "True" : "False")
                .withReason("Test")
                .withMessage("set by the test")
                .withObservedGeneration(observedGeneration)
                .withLastTransitionTime("2026-12-03T06:00:00Z")
                .build());
        return s;
    }

    @Test
    void statusApplyChangesNeitherSpecNorGenerationAndSpecWritesIgnoreStatus(CrdServers servers, TestNamespace ns) {
        for (CrdServers.Server server : servers.both()) {
            KubernetesClient c = server.client();
            String name = "status-" + server.name().replace('.', '-');
            InferenceDeployment d = InferenceDeploymentSchemaClusterTest.valid(name);
            d.getMetadata().setNamespace(ns.name());
            d.setStatus(status(Phase.Failed, 7)); // a user's create cannot set status
            InferenceDeployment created = c.resource(d).patch(apply("user", false), d);
            assertThat(created.getMetadata().getGeneration()).as(server.name()).isEqualTo(1L);
            assertThat(created.getStatus() == null || created.getStatus().phase == null)
                    .as(server.name() + ": status dropped on create: " + created.getStatus())
                    .isTrue();

            InferenceDeployment afterStatus = applyStatus(c, ns.name(), name, status(Phase.Progressing, 1));
            assertThat(afterStatus.getStatus().phase).as(server.name()).isEqualTo(Phase.Progressing);
            assertThat(afterStatus.getStatus().conditions).as(server.name()).hasSize(1);
            assertThat(afterStatus.getMetadata().getGeneration())
                    .as(server.name())
                    .isEqualTo(1L);
            assertThat(afterStatus.getSpec().parallelism.tensor)
                    .as(server.name())
                    .isEqualTo(2);
            ManagedFieldsEntry op = afterStatus.getMetadata().getManagedFields().stream()
                    .filter(m -> OPERATOR.equals(m.getManager()))
                    .findFirst()
                    .orElseThrow();
            assertThat(op.getOperation()).as(server.name()).isEqualTo("Apply");
            // the field appeared in 1.22: 1.36 says which subresource the manager wrote, 1.20 does not
            assertThat(op.getSubresource())
                    .as(server.name())
                    .isEqualTo(server.name().equals("1.20") ? null : "status");

            // a spec change through the main resource: generation moves, the status it carries is ignored
            InferenceDeployment edited = c.resources(InferenceDeployment.class)
                    .inNamespace(ns.name())
                    .withName(name)
                    .edit(x -> {
                        x.getSpec().replicas = 3;
                        x.getStatus().phase = Phase.Failed;
                        return x;
                    });
            assertThat(edited.getMetadata().getGeneration()).as(server.name()).isEqualTo(2L);
            assertThat(edited.getStatus().phase).as(server.name()).isEqualTo(Phase.Progressing);

            // and a second status apply replaces the operator's own fields (its one condition stays one)
            InferenceDeployment ready = applyStatus(c, ns.name(), name, status(Phase.Ready, 2));
            assertThat(ready.getStatus().observedGeneration).as(server.name()).isEqualTo(2L);
            assertThat(ready.getStatus().conditions).as(server.name()).hasSize(1);
            assertThat(ready.getMetadata().getGeneration()).as(server.name()).isEqualTo(2L);
            assertThat(ready.getSpec().replicas).as(server.name()).isEqualTo(3);
        }
    }

    @Test
    void serverSideApplyOfSpecConflictsBetweenManagersUnlessForced(CrdServers servers, TestNamespace ns) {
        for (CrdServers.Server server : servers.both()) {
            KubernetesClient c = server.client();
            String name = "ssa-" + server.name().replace('.', '-');
            InferenceDeployment d = InferenceDeploymentSchemaClusterTest.valid(name);
            d.getMetadata().setNamespace(ns.name());
            d.getSpec().replicas = 2;
            c.resource(d).patch(apply("kubectl", false), d);

            InferenceDeployment other = InferenceDeploymentSchemaClusterTest.valid(name);
            other.getMetadata().setNamespace(ns.name());
            other.getSpec().replicas = 5;
            assertThatThrownBy(() -> c.resource(other).patch(apply("gitops", false), other))
                    .as(server.name())
                    .isInstanceOfSatisfying(KubernetesClientException.class, e -> {
                        assertThat(e.getCode()).isEqualTo(409);
                        assertThat(e.getMessage()).contains(".spec.replicas").contains("kubectl");
                    });
            InferenceDeployment forced = c.resource(other).patch(apply("gitops", true), other);
            assertThat(forced.getSpec().replicas).as(server.name()).isEqualTo(5);
            assertThat(forced.getMetadata().getGeneration()).as(server.name()).isEqualTo(2L);
        }
    }

    /** GpuTopology: the probe's status apply of every topology fixture, then the labeller's merge patch of conditions. */
    @Test
    void gpuTopologyStatusOfEveryFixtureIsStoredAlikeOnBothServers(CrdServers servers) {
        Map<String, List<GpuTopologyStatus>> stored = new HashMap<>();
        for (CrdServers.Server server : servers.both()) {
            KubernetesClient c = server.client();
            List<GpuTopologyStatus> out = new ArrayList<>();
            for (String fixture : TopologyFixtures.ALL) {
                String name = "crd-parity-" + fixture;
                var t = new GpuTopology();
                t.setMetadata(new ObjectMetaBuilder().withName(name).build());
                t.setSpec(new GpuTopologySpec());
                t.getSpec().nodeName = name;
                try {
                    c.resource(t).create();
                    var patch = new GpuTopology();
                    patch.setMetadata(new ObjectMetaBuilder().withName(name).build());
                    patch.setSpec(null);
                    patch.setStatus(TopologyFixtures.load(fixture));
                    patch.getStatus().probeTime = "2026-12-03T06:00:00Z";
                    GpuTopology applied =
                            c.resource(patch).subresource("status").patch(apply(OPERATOR, true), patch);
                    assertThat(applied.getStatus().gpus)
                            .as(server.name() + " " + fixture)
                            .hasSameSizeAs(TopologyFixtures.load(fixture).gpus);

                    var merge = new GpuTopology();
                    merge.setMetadata(new ObjectMetaBuilder().withName(name).build());
                    merge.setSpec(null);
                    merge.setStatus(new GpuTopologyStatus());
                    merge.getStatus().conditions = List.of(new ConditionBuilder()
                            .withType("Stale")
                            .withStatus("True")
                            .withReason("ProbeResultTooOld")
                            .withMessage("test")
                            .withLastTransitionTime("2026-12-03T06:00:00Z")
                            .build());
                    GpuTopology merged =
                            c.resource(merge).subresource("status").patch(PatchContext.of(PatchType.JSON_MERGE), merge);
                    assertThat(merged.getStatus().conditions).as(server.name()).hasSize(1);
                    assertThat(merged.getStatus().gpus)
                            .as(server.name() + ": merge keeps the rest")
                            .isNotEmpty();
                    assertThat(merged.getMetadata().getGeneration())
                            .as(server.name())
                            .isEqualTo(1L);
                    out.add(merged.getStatus());
                } finally {
                    c.resource(t).delete();
                }
            }
            stored.put(server.name(), out);
        }
        assertThat(io.fabric8.kubernetes.client.utils.Serialization.asJson(stored.get("1.36")))
                .isEqualTo(io.fabric8.kubernetes.client.utils.Serialization.asJson(stored.get("1.20")));
    }
}
