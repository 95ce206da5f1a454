package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.SharedCluster;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;

/**
 * Issue 17, item 5: kube-apiserver and etcd are restarted (stopped, 2 s down, started again on the same data and
 * ports: {@code LocalControlPlane#restartApiServerAndEtcd}) twice while the {@link FaultStory} runs: once right after
 * a round's edits (rollouts starting, a new deployment to remediate), once while {@code up}'s failing upgrade is
 * applied and about to be rolled back. The operator process keeps running through the outages; afterwards every
 * deployment converges and the {@link FaultInvariants} hold.
 */
@WithLocalCluster
// On by default since 2026-12-01 22:30 UTC (-Dtensorlane.faults.apiserver=false skips it). It was opt-in after two
// full runs on the morning of 2026-12-01 left a pod behind after a restart (once Terminating, once a pod of the
// rolled-back revision in CrashLoopBackOff never removed). Likely cause (not proven for those runs, whose logs are
// gone): under load the outage outlasts the client's own retries (about 19 s) and the simulated kubelet dropped the
// finalize (fixed that morning) or status write it was making; it now retries both. A 40 s outage
// (-Dtensorlane.faults.apiserver.down=30) reproduces that with the old simulator (a new pod left Pending with no
// status) and passes with the retries. A failure prints the pods, ReplicaSets, Deployments and
// kube-controller-manager's
// errors (ClusterDump).
@DisabledIfSystemProperty(named = "tensorlane.faults.apiserver", matches = "false")
class ApiServerRestartE2ETest {
    /** How long both stay down; -Dtensorlane.faults.apiserver.down=SECONDS lengthens it (a slow machine's restart). */
    static final Duration DOWN = Duration.ofSeconds(Long.getLong("tensorlane.faults.apiserver.down", 2));

    @Test
    void apiServerAndEtcdRestartedMidRolloutLoseNothing(
            SharedCluster shared,
            LocalCluster cluster,
            KubernetesClient client,
            TestNamespace ns,
            GpuNodeSimulator sim) {
        assumeTrue(
                shared.plane() != null,
                "attached to an external cluster (TENSORLANE_KUBECONFIG): its API server is not "
                        + "this JVM's to restart");
        FaultStory.cluster(sim, ns.name());
        try (FaultInvariants inv = new FaultInvariants(client, ns.name());
                OperatorProcess operator = OperatorProcess.start(cluster, ns.name(), null)) {
            operator.awaitStarted();
            FaultStory story = new FaultStory(inv, ns.name());
            List<String> problems;
            try {
                story.create(false);
                story.round();
                restart(shared, "right after round 1's edits: " + story.phases());
                story.round();
                String failing = story.awaitUpgradeApplied();
                restart(shared, "with up's failing revision " + failing + " applied: " + story.phases());
                story.expectEndStates();
                problems = new ArrayList<>(story.problems());
                problems.addAll(inv.awaitConvergedAndCheck(Duration.ofSeconds(150)));
            } catch (RuntimeException | AssertionError e) { // a step of the story timed out
                System.out.println("[ApiServerRestartE2ETest] " + e + "\n" + dump(shared, client, ns, sim));
                throw e;
            }
            assertThat(problems)
                    .as(
                            "operator log %s, last lines:%n%s%n%s",
                            operator.log(),
                            operator.logTail(30),
                            problems.isEmpty() ? "" : dump(shared, client, ns, sim))
                    .isEmpty();
            assertThat(operator.isAlive())
                    .as("the operator survived the outages")
                    .isTrue();
            assertThat(operator.starts()).isEqualTo(1);
        }
    }

    private static String dump(SharedCluster shared, KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        return ClusterDump.of(client, ns.name(), sim, shared.plane());
    }

    private static void restart(SharedCluster shared, String when) {
        Duration took = shared.plane().restartApiServerAndEtcd(DOWN);
        System.out.printf(
                "[ApiServerRestartE2ETest] API server and etcd restarted (%d ms until ready again) %s%n",
                took.toMillis(), when);
    }
}
