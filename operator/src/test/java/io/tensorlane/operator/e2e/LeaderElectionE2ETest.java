package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.LeaderElectionConfiguration;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * Issue 17, item 5: two operator processes with leader election on the production lease and durations. The leader is
 * SIGKILLed while {@code up}'s failing upgrade is applied (its rollback still to come); the other takes the lease
 * within the lease time (plus the retry period fabric8's elector waits between tries) and finishes the story; the
 * killed one, started again, stays a follower. Then every deployment converges and the {@link FaultInvariants} hold.
 */
@WithLocalCluster
class LeaderElectionE2ETest {
    /**
     * The lease expires at most its duration after the killed leader's last renewal; a candidate notices at its next
     * try, every retry period with up to 1.2 jitter (fabric8 LeaderElector); 2 s for a loaded 2-core machine.
     */
    static final Duration HANDOVER_BOUND = LeaderElectionConfiguration.LEASE_DURATION_DEFAULT_VALUE
            .plus(LeaderElectionConfiguration.RETRY_PERIOD_DEFAULT_VALUE
                    .multipliedBy(22)
                    .dividedBy(10))
            .plusSeconds(2);

    @Test
    void killingTheLeaderHandsOverWithinTheLeaseTime(
            LocalCluster cluster, KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        FaultStory.cluster(sim, ns.name());
        try (FaultInvariants inv = new FaultInvariants(client, ns.name());
                OperatorProcess a = OperatorProcess.start(cluster, ns.name(), "replica-a");
                OperatorProcess b = OperatorProcess.start(cluster, ns.name(), "replica-b")) {
            a.awaitStarted();
            b.awaitStarted();
            String first = Awaitility.await()
                    .atMost(Duration.ofSeconds(60))
                    .ignoreExceptions()
                    .until(() -> holder(client, ns), h -> h != null);
            OperatorProcess leader = first.equals(a.identity()) ? a : b;
            OperatorProcess follower = leader == a ? b : a;
            int transitions = lease(client, ns).getSpec().getLeaseTransitions() == null
                    ? 0
                    : lease(client, ns).getSpec().getLeaseTransitions();

            FaultStory story = new FaultStory(inv, ns.name());
            story.create(true);
            story.round();
            String failing = story.awaitUpgradeApplied();
            long t0 = System.nanoTime();
            leader.kill();
            log("killed the leader " + leader.identity() + " with up's failing revision " + failing + " applied: "
                    + story.phases());
            Awaitility.await()
                    .atMost(HANDOVER_BOUND.plusSeconds(30))
                    .pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions()
                    .until(() -> follower.identity().equals(holder(client, ns)));
            Duration handover = Duration.ofNanos(System.nanoTime() - t0);
            log("lease held by " + follower.identity() + " " + handover.toMillis() + " ms after the kill (bound "
                    + HANDOVER_BOUND.toMillis() + " ms)");
            assertThat(handover).as("handover after the leader's SIGKILL").isLessThanOrEqualTo(HANDOVER_BOUND);

            leader.restart();
            leader.awaitStarted();
            story.round();
            story.expectEndStates();
            List<String> problems = new ArrayList<>(story.problems());
            problems.addAll(inv.awaitConvergedAndCheck(Duration.ofSeconds(120)));
            assertThat(problems)
                    .as("logs %s, %s; the new leader's last lines:%n%s", a.log(), b.log(), follower.logTail(30))
                    .isEmpty();
            assertThat(holder(client, ns))
                    .as("the restarted replica stays a follower")
                    .isEqualTo(follower.identity());
            assertThat(lease(client, ns).getSpec().getLeaseTransitions())
                    .as("one handover")
                    .isEqualTo(transitions + 1);
            assertThat(follower.isAlive()).isTrue();
            assertThat(leader.isAlive()).isTrue();
        }
    }

    static Lease lease(KubernetesClient client, TestNamespace ns) {
        return client.leases()
                .inNamespace(ns.name())
                .withName(TensorlaneConfig.Producer.LEASE_NAME)
                .get();
    }

    static String holder(KubernetesClient client, TestNamespace ns) {
        Lease l = lease(client, ns);
        return l == null ? null : l.getSpec().getHolderIdentity();
    }

    static void log(String msg) {
        System.out.println("[LeaderElectionE2ETest] " + msg);
    }
}
