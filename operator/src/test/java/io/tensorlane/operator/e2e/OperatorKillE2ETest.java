package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.testkit.LocalCluster;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Issue 17, item 5: the operator, as its own process, is SIGKILLed at {@value #KILLS} or more random points (a seeded
 * uptime of 0-{@value #MAX_UPTIME_MS} ms after each start; the seed is printed, {@code -Dtensorlane.faults.seed=N}
 * replays the schedule) while the {@link FaultStory} deployments roll out, remediate, exhaust their attempts, upgrade
 * and roll back, in rounds (each waits for the last to settle, then starts the next, until the kills are done, so the
 * faults land throughout); at least {@value #KILLS_AFTER_LAST_ROUND} kills fall after the last round started. It is started again after every kill. Then every deployment converges and the {@link FaultInvariants} hold: no rollback or remediation applied
 * twice, no lastStableSpec lost, the user's spec never changed.
 */
@WithLocalCluster
class OperatorKillE2ETest {
    static final int KILLS = 20;
    static final int KILLS_AFTER_LAST_ROUND = 3;
    static final int MAX_ROUNDS = 30;
    static final int MAX_UPTIME_MS = 2_500;
    static final Duration CONVERGE = Duration.ofSeconds(120);

    @Test
    void sigkillAtRandomPointsLosesNothingAndAppliesNoRollbackTwice(
            LocalCluster cluster, KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim)
            throws InterruptedException {
        long seed = Long.getLong("tensorlane.faults.seed", System.nanoTime());
        log("seed " + seed + " (replay with -Dtensorlane.faults.seed=" + seed + ")");
        Random random = new Random(seed);
        FaultStory.cluster(sim, ns.name());
        try (FaultInvariants inv = new FaultInvariants(client, ns.name());
                OperatorProcess operator = OperatorProcess.start(cluster, ns.name(), null)) {
            FaultStory story = new FaultStory(inv, ns.name());
            story.create(true);
            AtomicInteger kills = new AtomicInteger();
            AtomicInteger killsBeforeLastRound = new AtomicInteger(-1); // -1: rounds not played yet
            AtomicReference<Throwable> killerFailure = new AtomicReference<>();
            long t0 = System.nanoTime();
            Thread killer = new Thread(
                    () -> {
                        try {
                            while (kills.get() < KILLS
                                    || killsBeforeLastRound.get() < 0
                                    || kills.get() < killsBeforeLastRound.get() + KILLS_AFTER_LAST_ROUND) {
                                Duration startup = operator.awaitStarted();
                                int uptime = random.nextInt(MAX_UPTIME_MS + 1);
                                OperatorProcess.sleep(uptime);
                                operator.kill();
                                log(String.format(
                                        "kill %d at +%.1f s: started in %d ms, killed %d ms later; %s",
                                        kills.incrementAndGet(),
                                        (System.nanoTime() - t0) / 1e9,
                                        startup.toMillis(),
                                        uptime,
                                        story.phases()));
                                operator.restart();
                            }
                        } catch (Throwable e) {
                            killerFailure.set(e);
                        }
                    },
                    "operator-killer");
            killer.start();
            try {
                while (kills.get() < KILLS && story.rounds() < MAX_ROUNDS) {
                    story.round();
                    log("round " + story.rounds() + " (up upgraded to an OOMing spec, roll rolled, rem-"
                            + story.rounds() + " created) after " + kills.get() + " kills");
                }
                killsBeforeLastRound.set(kills.get());
                killer.join(Duration.ofSeconds(240).toMillis());
            } finally {
                if (killer.isAlive()) {
                    killer.interrupt();
                    killer.join(30_000);
                }
            }
            assertThat(killerFailure.get()).as("the kill loop").isNull();
            assertThat(killer.isAlive()).as("the kill loop ended").isFalse();
            assertThat(kills.get()).isGreaterThanOrEqualTo(KILLS);
            operator.awaitStarted();
            story.expectEndStates();
            log(kills.get() + " kills (" + (kills.get() - killsBeforeLastRound.get()) + " after the last round), "
                    + operator.starts() + " starts; the operator now runs undisturbed");

            List<String> problems = new java.util.ArrayList<>(story.problems());
            problems.addAll(inv.awaitConvergedAndCheck(CONVERGE));
            assertThat(problems)
                    .as("seed %d; operator log %s, last lines:%n%s", seed, operator.log(), operator.logTail(30))
                    .isEmpty();
            assertThat(operator.isAlive()).isTrue();
        }
    }

    static void log(String msg) {
        System.out.println("[OperatorKillE2ETest] " + msg);
    }
}
