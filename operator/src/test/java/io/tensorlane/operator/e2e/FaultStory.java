package io.tensorlane.operator.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/**
 * The story the fault tests put the operator through while they kill it or restart the API server, on two simulated
 * 8-GPU PCIe nodes (Llama-3.1-8B at TP 2, one or two replicas):
 *
 * <ul>
 *   <li>{@code up}: rolled out at fraction 0.80 and recorded stable; each round upgrades it to fraction 0.95 (and a new
 *       maxBatchTokens), which the simulator's CUDA OOM rule kills (&ge; 0.93) → rolled back once per round, to that
 *       first revision;
 *   <li>{@code roll}: two replicas; each round rolls out a new maxBatchTokens → {@code Ready} on the newest revision;
 *   <li>{@code rem-<round>}: one per round, created at 0.95 → remediated once (LowerMemoryFraction to 0.90) →
 *       {@code Ready}; checked and deleted in the next round;
 *   <li>{@code exh} (optional): every pod OOMs, maxAttempts 2 → two remediation steps → {@code Failed}.
 * </ul>
 *
 * Each ends with its rollback history, the count of Deployment templates it needed and at most one event per
 * decision ({@link FaultInvariants}).
 */
final class FaultStory {
    static final Duration STEP_TIMEOUT = Duration.ofSeconds(150);

    private final FaultInvariants inv;
    private final String namespace;
    private final List<String> problems = new ArrayList<>();
    private boolean exhausted;
    private int rounds;
    private String upStable;
    private String rollLast;

    FaultStory(FaultInvariants inv, String namespace) {
        this.inv = inv;
        this.namespace = namespace;
    }

    /**
     * Two 8-GPU PCIe nodes; CUDA OOM 1.5 s after start at fraction &ge; 0.93 in the namespace, and always for
     * {@code exh} (the delay keeps the failing revision running for a while, so faults also land there).
     */
    static void cluster(GpuNodeSimulator sim, String namespace) {
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addRule(SimRule.forAllPods("fault-oom-above-0.93", SimAction.cudaOom())
                .inNamespace(namespace)
                .withMemoryFractionAtLeast(0.93)
                .withDelayMillis(1500));
        sim.addRule(SimRule.forAllPods("fault-exh", SimAction.cudaOom())
                .inNamespace(namespace)
                .withPredicate(named("exh"))
                .withDelayMillis(1500));
    }

    /** Creates {@code up} and {@code roll} (and {@code exh} when {@code withExhausted}). */
    void create(boolean withExhausted) {
        exhausted = withExhausted;
        inv.create(small("up", 1, "0.80"));
        inv.create(small("roll", 2, "0.80"));
        if (exhausted) {
            InferenceDeployment exh = small("exh", 1, null);
            exh.getSpec().rollout.autoRollback.maxAttempts = 2;
            inv.create(exh);
        }
    }

    /**
     * One round: waits (bounded) until {@code up}, {@code roll} and the last round's {@code rem-<n>} settled; checks
     * that {@code rem-<n>} ended as it must and deletes it (waiting for its pods to go: GPUs); then upgrades {@code up}
     * to fraction 0.95 with a new maxBatchTokens (OOM), rolls {@code roll} to a new maxBatchTokens and creates
     * {@code rem-<n+1>} at 0.95.
     */
    void round() {
        String up = awaitSettled("up", FaultInvariants.settled(rounds == 0 ? Phase.Ready : Phase.RolledBack));
        upStable = upStable == null ? up : upStable;
        rollLast = awaitSettled("roll", FaultInvariants.settled(Phase.Ready));
        if (rounds > 0) {
            String rem = "rem-" + rounds;
            awaitSettled(rem, inv.expected(rem).converged());
            problems.addAll(inv.check(rem));
            inv.delete(rem);
            Awaitility.await()
                    .atMost(STEP_TIMEOUT)
                    .ignoreExceptions()
                    .until(() -> inv.client().pods().inNamespace(namespace).list().getItems().stream()
                            .noneMatch(named(rem)));
        }
        rounds++;
        int tokens = 2048 + 128 * rounds;
        inv.edit("up", d -> {
            d.getSpec().memory.fraction = "0.95";
            d.getSpec().serving.maxBatchTokens = tokens;
            return d;
        });
        inv.edit("roll", d -> {
            d.getSpec().serving.maxBatchTokens = tokens;
            return d;
        });
        String rem = "rem-" + rounds;
        inv.create(small(rem, 1, "0.95"));
        inv.expect(
                rem,
                new FaultInvariants.Expected(
                        "remediated once, Ready at 0.90",
                        FaultInvariants.settled(Phase.Ready)
                                .and(d ->
                                        Double.parseDouble(d.getStatus().lastStableSpec.spec.memory.fraction) == 0.90),
                        List.of("LowerMemoryFraction"),
                        2,
                        0,
                        1));
    }

    int rounds() {
        return rounds;
    }

    /** What the rounds found wrong with the deployments they deleted. */
    List<String> problems() {
        return problems;
    }

    /** Registers what {@code up}, {@code roll} and {@code exh} must end as after the rounds played. */
    void expectEndStates() {
        int r = rounds;
        inv.expect(
                "up",
                new FaultInvariants.Expected(
                        "rolled back to its first stable revision after each of " + r + " OOMing upgrades",
                        FaultInvariants.settled(Phase.RolledBack)
                                .and(d -> d.getStatus().revision.equals(upStable)),
                        List.of("Rollback"),
                        1 + 2 * r,
                        r,
                        0));
        inv.expect(
                "roll",
                new FaultInvariants.Expected(
                        "revision " + (r + 1) + " rolled out and stable",
                        FaultInvariants.settled(Phase.Ready)
                                .and(d -> d.getMetadata().getGeneration() == r + 1
                                        && !d.getStatus().revision.equals(rollLast)),
                        List.of(),
                        1 + r,
                        0,
                        0));
        if (exhausted) {
            inv.expect(
                    "exh",
                    new FaultInvariants.Expected(
                            "two remediation steps, then Failed",
                            FaultInvariants.settled(Phase.Failed).and(d -> d.getStatus().rollback.attempts == 2),
                            List.of("LowerMemoryFraction", "ShrinkAllreduceBuffer"),
                            3,
                            0,
                            2));
        }
    }

    /** The revision of {@code up} the operator applied, once it is no longer the stable one (the failing upgrade). */
    String awaitUpgradeApplied() {
        return Samples.await(
                        inv.client(),
                        namespace,
                        "up",
                        STEP_TIMEOUT,
                        d -> d.getStatus() != null
                                && d.getStatus().lastAppliedSpec != null
                                && !d.getStatus().lastAppliedSpec.revision.equals(upStable))
                .getStatus()
                .lastAppliedSpec
                .revision;
    }

    private String awaitSettled(String name, Predicate<InferenceDeployment> settled) {
        return Samples.await(inv.client(), namespace, name, STEP_TIMEOUT, settled)
                .getStatus()
                .revision;
    }

    private InferenceDeployment small(String name, int replicas, String fraction) {
        InferenceDeployment d = Samples.load(Samples.SMALL_2GPU, namespace, name);
        d.getSpec().replicas = replicas;
        if (fraction != null) {
            d.getSpec().memory.fraction = fraction;
        }
        return d;
    }

    static Predicate<Pod> named(String deployment) {
        return p -> p.getMetadata().getName().startsWith(deployment + "-");
    }

    /** One line: each deployment's phase and history length, for the log of a fault. */
    String phases() {
        StringBuilder b = new StringBuilder();
        for (String name : List.of("up", "roll", "exh", "rem-" + rounds)) {
            try {
                InferenceDeployment d = inv.get(name);
                if (d != null) {
                    var s = d.getStatus();
                    b.append(name)
                            .append('=')
                            .append(s == null ? "-" : s.phase)
                            .append('/')
                            .append(s == null || s.rollback == null ? 0 : s.rollback.history.size())
                            .append(' ');
                }
            } catch (RuntimeException e) {
                b.append(name).append("=? ");
            }
        }
        return b.toString().trim();
    }
}
