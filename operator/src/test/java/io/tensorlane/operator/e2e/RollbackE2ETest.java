package io.tensorlane.operator.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import io.tensorlane.api.v1alpha1.Phase;
import io.tensorlane.api.v1alpha1.RollbackStatus;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.operator.render.Renderer;
import io.tensorlane.operator.status.Conditions;
import io.tensorlane.operator.status.StatusAggregator;
import io.tensorlane.testkit.TestNamespace;
import io.tensorlane.testkit.WithLocalCluster;
import io.tensorlane.testkit.sim.GpuNodeSimulator;
import io.tensorlane.testkit.sim.SimAction;
import io.tensorlane.testkit.sim.SimRule;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.util.List;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 5 end to end: the simulator plays the failures (CUDA OOM with the runtime's termination message, host
 * OOMKilled, CrashLoopBackOff) and the operator rolls back or remediates, with every step in status and events.
 */
@WithLocalCluster
class RollbackE2ETest {
    static final Duration TIMEOUT = Duration.ofSeconds(90);
    static OperatorHarness operator;

    @BeforeAll
    static void start(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        sim.addNode(TopologyFixtures.RTX_PRO_6000_PCIE_8);
        operator = OperatorHarness.start(client, ns.name());
    }

    @AfterAll
    static void stop() {
        if (operator != null) {
            operator.close();
        }
    }

    @AfterEach
    void cleanUp(KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.clearRules();
        client.resources(InferenceDeployment.class).inNamespace(ns.name()).delete();
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .until(() ->
                        client.pods().inNamespace(ns.name()).list().getItems().isEmpty());
    }

    @Test
    void seedScenarioForcedFractionOomsAndRemediationLowersIt(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        sim.addRule(SimRule.forAllPods("seed-oom", SimAction.cudaOom("ipc-buffers", 25_165_824L, 4_194_304L))
                .inNamespace(ns.name())
                .withMemoryFractionAtLeast(0.93)
                .withPredicate(named("seed")));
        InferenceDeployment d = Samples.load(Samples.SEED_PCIE, ns.name(), "seed");
        d.getSpec().allreduce.mode = io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode.Custom;
        d.getSpec().memory.fraction = "0.95";
        client.resource(d).create();

        InferenceDeployment ready = Samples.await(client, ns.name(), "seed", TIMEOUT, Samples.phase(Phase.Ready));
        var s = ready.getStatus();
        assertThat(s.lastFailure.reason).isEqualTo("CudaOutOfMemory");
        assertThat(s.lastFailure.message).contains("ipc-buffers");
        assertThat(s.rollback.history).isNotEmpty();
        assertThat(s.rollback.history.get(0).action).isEqualTo(Action.LowerMemoryFraction);
        assertThat(s.rollback.history.get(0).change).contains("0.95");
        assertThat(Double.parseDouble(s.lastAppliedSpec.spec.memory.fraction)).isLessThan(0.93);
        assertThat(ready.getSpec().memory.fraction)
                .as("the user's spec is never modified")
                .isEqualTo("0.95");
        awaitReasons(client, ns, "seed", "Degraded", "Remediated", "Ready");
        assertThat(client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                        .filter(e -> "Remediated".equals(e.getReason()))
                        .findFirst()
                        .orElseThrow()
                        .getMessage())
                .contains("LowerMemoryFraction")
                .contains("CudaOutOfMemory");
    }

    @Test
    void theComputedOomRuleLetsAutoRunAndTheForcedFractionReproducesTheIncident(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        // the demo's rule: no threshold, the start-up allocations against the GPU (SimMemory / MemoryBudget)
        sim.addRule(SimRule.forAllPods("computed-oom", SimAction.of(SimAction.Type.CudaOom))
                .inNamespace(ns.name())
                .whenOutOfMemory());
        client.resource(Samples.load(Samples.SEED_PCIE, ns.name(), "truth")).create();
        InferenceDeployment auto = Samples.await(
                client,
                ns.name(),
                "truth",
                TIMEOUT,
                Samples.phase(Phase.Ready).and(x -> x.getStatus().lastStableSpec != null));
        assertThat(auto.getStatus().memoryPlan.fractionSource).isEqualTo("auto");
        double autoFraction = auto.getStatus().memoryPlan.staticFraction;
        assertThat(autoFraction).as("above the old fixed 0.93 threshold").isGreaterThanOrEqualTo(0.93);
        assertThat(auto.getStatus().lastFailure).as("auto starts").isNull();
        String stable = auto.getStatus().revision;

        String forced = String.format(java.util.Locale.ROOT, "%.2f", autoFraction + 0.02);
        edit(client, ns, "truth", x -> {
            x.getSpec().memory.fraction = forced;
            return x;
        });
        InferenceDeployment back = Samples.await(
                client,
                ns.name(),
                "truth",
                TIMEOUT,
                Samples.phase(Phase.RolledBack)
                        .and(x -> Conditions.isTrue(x.getStatus().conditions, StatusAggregator.READY)));
        assertThat(back.getStatus().lastFailure.reason).isEqualTo("CudaOutOfMemory");
        assertThat(back.getStatus().lastFailure.message)
                .as("the allocation that no longer fits")
                .containsAnyOf("cuda-graphs", "activations", "reserve");
        assertThat(back.getStatus().revision).isEqualTo(stable);
    }

    @Test
    void upgradeToAnOomingSpecRollsBackAndANewEditIsTriedAgain(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        String stable = stableDeployment(client, ns, "upg");
        sim.addRule(SimRule.forAllPods("upg-oom", SimAction.cudaOom())
                .inNamespace(ns.name())
                .withPredicate(named("upg").and(p -> !stable.equals(revision(p)))));
        edit(client, ns, "upg", x -> {
            x.getSpec().memory.fraction = "0.95";
            return x;
        });
        InferenceDeployment rolledBack = Samples.await(
                client,
                ns.name(),
                "upg",
                TIMEOUT,
                Samples.phase(Phase.RolledBack)
                        .and(x -> Conditions.isTrue(x.getStatus().conditions, StatusAggregator.READY)));
        var s = rolledBack.getStatus();
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.ROLLED_BACK))
                .isTrue();
        assertThat(s.revision).isEqualTo(stable);
        assertThat(s.rollback.history).extracting(a -> a.action).containsExactly(Action.Rollback);
        assertThat(RolloutE2ETest.deployment(client, ns, rolledBack)
                        .getSpec()
                        .getTemplate()
                        .getMetadata()
                        .getLabels())
                .containsEntry(Renderer.LABEL_REVISION, stable);
        awaitReasons(client, ns, "upg", "Rollback");

        // the user edits the spec again: a new generation is tried (and is healthy)
        sim.clearRules();
        edit(client, ns, "upg", x -> {
            x.getSpec().memory.fraction = "0.85";
            return x;
        });
        InferenceDeployment again = Samples.await(client, ns.name(), "upg", TIMEOUT, Samples.phase(Phase.Ready));
        assertThat(again.getStatus().revision).isNotEqualTo(stable);
        assertThat(again.getStatus().lastAppliedSpec.spec.memory.fraction).isEqualTo("0.85");
        assertThat(Conditions.isTrue(again.getStatus().conditions, StatusAggregator.ROLLED_BACK))
                .isFalse();
    }

    static Stream<Arguments> secondaryFailures() {
        return Stream.of(
                Arguments.of("host-oom", SimAction.oomKilled(), "OOMKilled"),
                Arguments.of("crashloop", SimAction.crashLoop(3), "CrashLoopBackOff"));
    }

    @ParameterizedTest(name = "{2}")
    @MethodSource("secondaryFailures")
    void failureOfAnUpgradeRollsBack(
            String name,
            SimAction action,
            String reason,
            KubernetesClient client,
            TestNamespace ns,
            GpuNodeSimulator sim) {
        String stable = stableDeployment(client, ns, name);
        sim.addRule(SimRule.forAllPods(name, action)
                .inNamespace(ns.name())
                .withPredicate(named(name).and(p -> !stable.equals(revision(p)))));
        edit(client, ns, name, x -> {
            x.getSpec().serving.maxBatchTokens = 2048;
            return x;
        });
        InferenceDeployment d = Samples.await(client, ns.name(), name, TIMEOUT, Samples.phase(Phase.RolledBack));
        assertThat(d.getStatus().lastFailure.reason).isEqualTo(reason);
        assertThat(d.getStatus().revision).isEqualTo(stable);
        assertThat(d.getStatus().rollback.history).extracting(a -> a.action).containsExactly(Action.Rollback);
    }

    @Test
    void upgradeThatNeverGetsReadyRollsBackAtTheProgressDeadline(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) {
        String stable = stableDeployment(client, ns, "deadline");
        sim.addRule(SimRule.forAllPods("deadline-hang", SimAction.hang())
                .inNamespace(ns.name())
                .withPredicate(named("deadline").and(p -> !stable.equals(revision(p)))));
        edit(client, ns, "deadline", x -> {
            x.getSpec().serving.maxBatchTokens = 2048;
            x.getSpec().rollout.progressDeadlineSeconds = 30; // the schema's minimum: the Deployment controller's clock
            return x;
        });
        InferenceDeployment d =
                Samples.await(client, ns.name(), "deadline", Duration.ofSeconds(150), Samples.phase(Phase.RolledBack));
        assertThat(d.getStatus().lastFailure.reason).isEqualTo("ProgressDeadlineExceeded");
        assertThat(d.getStatus().revision).isEqualTo(stable);
        assertThat(d.getStatus().rollback.history).extracting(a -> a.action).containsExactly(Action.Rollback);
        assertThat(RolloutE2ETest.deployment(client, ns, d).getSpec().getProgressDeadlineSeconds())
                .as("the stable spec's deadline is back")
                .isEqualTo(900);
    }

    @Test
    void exhaustedAttemptsEndInFailedAndStopWritingTheDeployment(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws InterruptedException {
        sim.addRule(SimRule.forAllPods("exh", SimAction.cudaOom())
                .inNamespace(ns.name())
                .withPredicate(named("exh")));
        InferenceDeployment d = Samples.load(Samples.SMALL_2GPU, ns.name(), "exh");
        d.getSpec().replicas = 1;
        d.getSpec().rollout.autoRollback.maxAttempts = 2;
        client.resource(d).create();

        InferenceDeployment failed = Samples.await(client, ns.name(), "exh", TIMEOUT, Samples.phase(Phase.Failed));
        var s = failed.getStatus();
        assertThat(s.rollback.attempts).isEqualTo(2);
        assertThat(s.rollback.history).hasSize(2);
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.ROLLBACK_FAILED))
                .isTrue();
        assertThat(Conditions.isTrue(s.conditions, StatusAggregator.DEGRADED)).isTrue();
        assertThat(Conditions.find(s.conditions, StatusAggregator.ROLLBACK_FAILED)
                        .orElseThrow()
                        .getMessage())
                .contains("attempts");
        awaitReasons(client, ns, "exh", "RollbackFailed");

        String rv = RolloutE2ETest.deployment(client, ns, failed).getMetadata().getResourceVersion();
        double applies = operator.metrics().count("tensorlane.applies", "kind", "Deployment");
        Thread.sleep(6000); // pods keep failing; the operator must not touch the Deployment again
        assertThat(RolloutE2ETest.deployment(client, ns, failed).getMetadata().getResourceVersion())
                .isEqualTo(rv);
        assertThat(operator.metrics().count("tensorlane.applies", "kind", "Deployment"))
                .isEqualTo(applies);
        assertThat(Samples.get(client, ns.name(), "exh").getStatus().rollback.history)
                .hasSize(2);
    }

    @Test
    void operatorStoppedBetweenFailureAndRollbackRollsBackExactlyOnce(
            KubernetesClient client, TestNamespace ns, GpuNodeSimulator sim) throws InterruptedException {
        String stable = stableDeployment(client, ns, "rst");
        sim.addRule(SimRule.forAllPods("rst-oom", SimAction.cudaOom())
                .inNamespace(ns.name())
                .withDelayMillis(3000)
                .withPredicate(named("rst").and(p -> !stable.equals(revision(p)))));
        edit(client, ns, "rst", x -> {
            x.getSpec().memory.fraction = "0.95";
            return x;
        });
        String failing = Samples.await(
                        client,
                        ns.name(),
                        "rst",
                        TIMEOUT,
                        x -> x.getStatus().lastAppliedSpec != null
                                && !stable.equals(x.getStatus().lastAppliedSpec.revision))
                .getStatus()
                .lastAppliedSpec
                .revision;
        operator.close(); // the failing revision is applied; its pod dies while no operator runs
        try {
            Awaitility.await()
                    .atMost(TIMEOUT)
                    .until(() -> client.pods().inNamespace(ns.name()).list().getItems().stream()
                            .anyMatch(p -> failing.equals(revision(p))
                                    && StatusAggregator.badPod(p).isPresent()));
            assertThat(Samples.get(client, ns.name(), "rst").getStatus().rollback)
                    .isNull();
        } finally {
            operator = OperatorHarness.start(client, ns.name());
        }
        Samples.await(client, ns.name(), "rst", TIMEOUT, Samples.phase(Phase.RolledBack));
        operator.close(); // and once more after the rollback: the handled failure is not handled again
        operator = OperatorHarness.start(client, ns.name());
        Thread.sleep(5000);
        InferenceDeployment d = Samples.get(client, ns.name(), "rst");
        RollbackStatus rb = d.getStatus().rollback;
        assertThat(rb.history).extracting(a -> a.action).containsExactly(Action.Rollback);
        assertThat(rb.handledRevision).isEqualTo(failing);
        assertThat(d.getStatus().revision).isEqualTo(stable);
        assertThat(awaitReasons(client, ns, "rst", "Rollback").stream()
                        .filter("Rollback"::equals)
                        .count())
                .isEqualTo(1);
    }

    /** Creates a small deployment, waits until it is Ready and recorded as stable; returns its revision. */
    static String stableDeployment(KubernetesClient client, TestNamespace ns, String name) {
        InferenceDeployment d = Samples.load(Samples.SMALL_2GPU, ns.name(), name);
        d.getSpec().replicas = 1;
        d.getSpec().memory.fraction = "0.80";
        client.resource(d).create();
        return Samples.await(
                        client,
                        ns.name(),
                        name,
                        TIMEOUT,
                        Samples.phase(Phase.Ready)
                                .and(x -> x.getStatus().lastStableSpec != null
                                        && x.getStatus().lastStableSpec.revision.equals(x.getStatus().revision)))
                .getStatus()
                .revision;
    }

    static void edit(KubernetesClient client, TestNamespace ns, String name, UnaryOperator<InferenceDeployment> f) {
        client.resources(InferenceDeployment.class)
                .inNamespace(ns.name())
                .withName(name)
                .edit(f);
    }

    static java.util.function.Predicate<Pod> named(String deployment) {
        return p -> p.getMetadata().getName().startsWith(deployment + "-");
    }

    static String revision(Pod p) {
        return StatusAggregator.revisionOf(p);
    }

    /** The event reasons on {@code name} once they include {@code expected} (events are written in the background). */
    static List<String> awaitReasons(KubernetesClient client, TestNamespace ns, String name, String... expected) {
        Awaitility.await()
                .atMost(TIMEOUT)
                .untilAsserted(() -> assertThat(reasons(client, ns, name)).contains(expected));
        return reasons(client, ns, name);
    }

    /** The message of the event {@code reason} on {@code name}. */
    static String message(KubernetesClient client, TestNamespace ns, String name, String reason) {
        return client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason()))
                .findFirst()
                .orElseThrow()
                .getMessage();
    }

    static List<String> reasons(KubernetesClient client, TestNamespace ns, String name) {
        return client.v1().events().inNamespace(ns.name()).list().getItems().stream()
                .filter(e -> name.equals(e.getInvolvedObject().getName()))
                .map(e -> e.getReason())
                .toList();
    }
}
