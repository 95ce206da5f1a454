package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A decision whose status write fails leaves no event behind (issue 17, item 6): the operator decides a rollback while
 * it may not write InferenceDeployment status (its ClusterRole lacks {@code inferencedeployments/status}); every
 * retry decides the same rollback again and fails the same way. Before, each attempt wrote a Rollback event for a
 * rollback that never happened (the events were flushed in a finally block); now only the failure itself is reported,
 * as one aggregated Warning whose count grows. Once status can be written, the rollback happens once, with one event.
 */
@WithLocalCluster
class FailedStatusWriteE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(60);
    static OperatorHarness operator;
    static String role;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.L40S_2);
        operator = OperatorHarness.start(client, ns.name());
        role = "tensorlane-no-status-" + ns.name();
    }

    @AfterAll
    static void stop(KubernetesClient client) {
        if (operator != null) {
            operator.close();
        }
        client.rbac().clusterRoleBindings().withName(role).delete();
        client.rbac().clusterRoles().withName(role).delete();
    }

    @Test
    void aRollbackWhoseStatusCannotBeWrittenIsNotAnnouncedAndHappensOnceItCan(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim, LocalCluster cluster)
            throws InterruptedException {
        String stable = RollbackE2ETest.stableDeployment(client, ns, "dup");
        sim.addRule(SimRule.forAllPods("dup-oom", SimAction.cudaOom())
                .inNamespace(ns.name())
                .withDelayMillis(3000)
                .withPredicate(RollbackE2ETest.named("dup").and(p -> !stable.equals(RollbackE2ETest.revision(p)))));
        RollbackE2ETest.edit(client, ns, "dup", x -> {
            x.getSpec().memory.fraction = "0.95";
            return x;
        });
        String failing = Samples.await(
                        client,
                        ns.name(),
                        "dup",
                        TIMEOUT,
                        x -> x.getStatus().lastAppliedSpec != null
                                && !stable.equals(x.getStatus().lastAppliedSpec.revision))
                .getStatus()
                .lastAppliedSpec
                .revision;
        operator.close(); // the failing revision is applied; its pod dies while no operator runs
        operator = null;
        Awaitility.await()
                .atMost(TIMEOUT)
                .until(() -> client.pods().inNamespace(ns.name()).list().getItems().stream()
                        .anyMatch(p -> failing.equals(RollbackE2ETest.revision(p))
                                && StatusAggregator.badPod(p).isPresent()));

        try (KubernetesClient noStatus = clientWithoutStatusWrites(client, ns, cluster)) {
            operator = OperatorHarness.start(noStatus, ns.name());
            // at least three reconciles decided the rollback and failed to record it: one Warning, counted
            Awaitility.await()
                    .atMost(TIMEOUT)
                    .until(() -> events(client, ns, "dup").stream()
                            .anyMatch(
                                    e -> "InferenceDeploymentApplyFailed".equals(e.getReason()) && e.getCount() >= 3));
            List<Event> failures = events(client, ns, "dup").stream()
                    .filter(e -> "InferenceDeploymentApplyFailed".equals(e.getReason()))
                    .toList();
            assertThat(failures)
                    .as("the repeated failure is one aggregated event")
                    .hasSize(1);
            assertThat(failures.get(0).getType()).isEqualTo("Warning");
            assertThat(failures.get(0).getMessage()).contains("inferencedeployments/status");
            assertThat(count(client, ns, "Rollback"))
                    .as("no event for a rollback whose status was not written")
                    .isZero();
            assertThat(Samples.get(client, ns.name(), "dup").getStatus().revision)
                    .isEqualTo(failing);
            assertThat(RolloutE2ETest.deployment(client, ns, Samples.get(client, ns.name(), "dup"))
                            .getSpec()
                            .getTemplate()
                            .getMetadata()
                            .getLabels())
                    .as("the Deployment is not touched before the decision is in status")
                    .containsEntry(Renderer.LABEL_REVISION, failing);
            operator.close();
            operator = null;
        }

        operator = OperatorHarness.start(client, ns.name());
        Samples.await(client, ns.name(), "dup", TIMEOUT, Samples.phase(Phase.RolledBack));
        RollbackE2ETest.awaitReasons(client, ns, "dup", "Rollback");
        Thread.sleep(3000); // the event writer is asynchronous: a second Rollback event would be there by now
        assertThat(count(client, ns, "Rollback")).as("one rollback, one event").isEqualTo(1);
    }

    /** A client of a ServiceAccount that may do what the operator does, except write InferenceDeployment status. */
    static KubernetesClient clientWithoutStatusWrites(KubernetesClient admin, TestNamespace ns, LocalCluster cluster) {
        admin.serviceAccounts()
                .inNamespace(ns.name())
                .resource(new ServiceAccountBuilder()
                        .withNewMetadata()
                        .withName("no-status")
                        .endMetadata()
                        .build())
                .create();
        ClusterRole r = new ClusterRoleBuilder()
                .withNewMetadata()
                .withName(role)
                .endMetadata()
                .addNewRule()
                .withApiGroups("")
                .withResources("nodes", "pods", "services", "events", "configmaps", "secrets")
                .withVerbs("*")
                .endRule()
                .addNewRule()
                .withApiGroups("apps")
                .withResources("deployments")
                .withVerbs("*")
                .endRule()
                .addNewRule()
                .withApiGroups("batch")
                .withResources("jobs")
                .withVerbs("*")
                .endRule()
                .addNewRule()
                .withApiGroups("tensorlane.io")
                .withResources("inferencedeployments", "gputopologies", "gputopologies/status")
                .withVerbs("*")
                .endRule()
                .build();
        admin.rbac().clusterRoles().resource(r).create();
        ClusterRoleBinding b = new ClusterRoleBindingBuilder()
                .withNewMetadata()
                .withName(role)
                .endMetadata()
                .withNewRoleRef()
                .withApiGroup("rbac.authorization.k8s.io")
                .withKind("ClusterRole")
                .withName(role)
                .endRoleRef()
                .addNewSubject()
                .withKind("ServiceAccount")
                .withName("no-status")
                .withNamespace(ns.name())
                .endSubject()
                .build();
        admin.rbac().clusterRoleBindings().resource(b).create();
        return cluster.clientAs(admin, ns.name(), "no-status");
    }

    static List<Event> events(KubernetesClient client, TestNamespace ns, String name) {
        return client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName())
                        && "InferenceDeployment".equals(e.getInvolvedObject().getKind()))
                .toList();
    }

    /** Occurrences of {@code reason} on "dup": the counts of its events summed. */
    static long count(KubernetesClient client, TestNamespace ns, String reason) {
        return events(client, ns, "dup").stream()
                .filter(e -> reason.equals(e.getReason()))
                .mapToLong(e -> e.getCount() == null ? 1 : e.getCount())
                .sum();
    }
}
