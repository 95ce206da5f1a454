package io.tensorlane.operator.preflight;

import static org.assertj.core.api.Assertions.assertThat;

import io.tensorlane.api.v1alpha1.AllreduceDecision.AlgorithmRange;
import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.TestConfig;
import io.tensorlane.operator.plan.Fixtures;
import io.tensorlane.topology.TopologyFixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Table of the pure preflight decision: spec × plan × topology measurement × Job state × time. */
class PreflightGateTest {
    static final Instant NOW = Instant.parse("2026-11-29T12:00:00Z");
    static final TensorlaneConfig S =
            TestConfig.with("tensorlane.preflight.deadline", "300s", "tensorlane.preflight.grace", "30s");
    static final String OK_JSON = "{\"worldSize\":8,\"p2pVerified\":true,\"selftestPassed\":true,"
            + "\"algorithmTable\":[{\"upToBytes\":524288,\"algorithm\":\"OneStage\"},{\"upToBytes\":8388608,\"algorithm\":\"TwoStage\"}],"
            + "\"latencies\":[{\"bytes\":43008,\"customMicros\":21.5,\"ncclMicros\":198.0,\"algorithm\":\"OneStage\"}]}";

    /** Expected decision kind and a fragment of its reason (or of the recorded failure). */
    record Expect(Class<? extends PreflightDecision> kind, String fragment) {}

    static Stream<Arguments> table() {
        Instant created = NOW.minusSeconds(60);
        Instant finished = NOW.minusSeconds(5);
        return Stream.of(
                // not needed
                row(
                        "SGLang engine",
                        spec(s -> s.engine.type = EngineType.SGLang),
                        true,
                        true,
                        topo(null),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "engine SGLang")),
                row(
                        "tensor 1",
                        spec(s -> s.parallelism.tensor = 1),
                        true,
                        true,
                        topo(null),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "tensor parallelism 1")),
                row(
                        "mode NCCL",
                        spec(s -> s.allreduce.mode = AllreduceMode.NCCL),
                        true,
                        true,
                        topo(null),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "allreduce.mode NCCL")),
                row(
                        "plan chose NCCL",
                        spec(s -> {}),
                        false,
                        true,
                        topo(null),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "does not use the custom")),
                row(
                        "no GpuTopology",
                        spec(s -> {}),
                        true,
                        true,
                        null,
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "no GpuTopology")),
                row(
                        "recent success for 8",
                        spec(s -> {}),
                        true,
                        true,
                        topo(measured(8, null, NOW.minus(Duration.ofDays(1)))),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "measured at")),
                row(
                        "recent failure",
                        spec(s -> {}),
                        true,
                        true,
                        topo(measured(8, "P2P broken", NOW.minusSeconds(3600))),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "NCCL is used")),
                row(
                        "already rolled out",
                        spec(s -> {}),
                        true,
                        false,
                        topo(null),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.None.class, "already rolled out")),
                // needed
                row(
                        "no measurement, no Job",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.StartJob.class, "no recent measurement for 8 GPUs")),
                row(
                        "measurement for 4 GPUs only",
                        spec(s -> {}),
                        true,
                        true,
                        topo(measured(4, null, NOW)),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.StartJob.class, "no recent measurement")),
                row(
                        "measurement 8 days old",
                        spec(s -> {}),
                        true,
                        true,
                        topo(measured(8, null, NOW.minus(Duration.ofDays(8)))),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.StartJob.class, "no recent measurement")),
                row(
                        "only the probe's P2P check (no selftest, no table)",
                        spec(s -> {}),
                        true,
                        true,
                        topo(probeOnly(8)),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.StartJob.class, "no recent measurement")),
                row(
                        "old failure is retried",
                        spec(s -> {}),
                        true,
                        true,
                        topo(measured(8, "P2P broken", NOW.minus(Duration.ofDays(8)))),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.StartJob.class, "no recent measurement")),
                row(
                        "forced Custom mode still measured",
                        spec(s -> s.allreduce.mode = AllreduceMode.Custom),
                        true,
                        true,
                        topo(null),
                        JobState.ABSENT,
                        new Expect(PreflightDecision.StartJob.class, "selftest + bench")),
                row(
                        "Job running",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.active(created),
                        new Expect(PreflightDecision.Wait.class, "running since")),
                row(
                        "Job past deadline + grace",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.active(NOW.minusSeconds(331)),
                        new Expect(PreflightDecision.Record.class, "did not finish within 330 s")),
                row(
                        "Job succeeded with a good result",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.succeeded(created, finished, OK_JSON),
                        new Expect(PreflightDecision.Record.class, "preflight passed")),
                row(
                        "Job succeeded, no message",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.succeeded(created, finished, null),
                        new Expect(PreflightDecision.Record.class, "no termination message")),
                row(
                        "Job succeeded, garbage message",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.succeeded(created, finished, "all good!"),
                        new Expect(PreflightDecision.Record.class, "not JSON")),
                row(
                        "Job succeeded but selftest failed",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.succeeded(
                                created,
                                finished,
                                OK_JSON.replace("\"selftestPassed\":true", "\"selftestPassed\":false")),
                        new Expect(PreflightDecision.Record.class, "selftest did not pass")),
                row(
                        "Job succeeded for the wrong world size",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.succeeded(created, finished, OK_JSON.replace("\"worldSize\":8", "\"worldSize\":4")),
                        new Expect(PreflightDecision.Record.class, "measured 4 GPUs, 8 were asked for")),
                row(
                        "Job failed: P2P broken (our JSON)",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.failed(
                                created,
                                finished,
                                "BackoffLimitExceeded",
                                "Job has reached the specified backoff limit",
                                "{\"worldSize\":8,\"p2pVerified\":false,\"failure\":\"P2P read-back wrong between GPU 2 and 5\"}",
                                1),
                        new Expect(PreflightDecision.Record.class, "P2P read-back wrong between GPU 2 and 5")),
                row(
                        "Job failed: CUDA OOM message",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.failed(
                                created,
                                finished,
                                "BackoffLimitExceeded",
                                null,
                                "{\"reason\":\"CudaOutOfMemory\",\"phase\":\"ipc-buffers\",\"requestedBytes\":25165824,\"freeBytes\":4194304}",
                                1),
                        new Expect(PreflightDecision.Record.class, "CUDA out of memory while allocating ipc-buffers")),
                row(
                        "Job failed: crash log tail",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.failed(
                                created, finished, "BackoffLimitExceeded", null, "Exception in thread main: boom", 134),
                        new Expect(
                                PreflightDecision.Record.class,
                                "exited with code 134: Exception in thread main: boom")),
                row(
                        "Job failed: deadline",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.failed(
                                created,
                                finished,
                                "DeadlineExceeded",
                                "Job was active longer than specified deadline",
                                null,
                                null),
                        new Expect(PreflightDecision.Record.class, "timed out after 300 s")),
                row(
                        "Job finished 8 days ago",
                        spec(s -> {}),
                        true,
                        true,
                        topo(null),
                        JobState.succeeded(NOW.minus(Duration.ofDays(8)), NOW.minus(Duration.ofDays(8)), OK_JSON),
                        new Expect(PreflightDecision.StartJob.class, "too long ago")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void decides(
            String name,
            InferenceDeploymentSpec spec,
            boolean custom,
            boolean first,
            GpuTopologyStatus topo,
            JobState job,
            Expect expect) {
        PreflightDecision d =
                PreflightGate.decide(spec, new PreflightGate.Planned("gpu-node-1", custom, first), topo, job, NOW, S);
        assertThat(d).isInstanceOf(expect.kind());
        String text =
                d instanceof PreflightDecision.Record r ? r.reason() + " | " + r.measurement().failure : d.reason();
        assertThat(text).contains(expect.fragment());
        if (d instanceof PreflightDecision.Record r) {
            assertThat(r.measurement().time).as("recorded time").isNotNull();
            assertThat(r.measurement().worldSize).isNotNull();
            assertThat(r.success()).isEqualTo(r.measurement().failure == null);
            // what the planner reads back: a failure switches to NCCL, a success is a measured table
            assertThat(PreflightGate.notNeeded(spec, true, topo(r.measurement()), NOW, S.measurementMaxAge()))
                    .isNotNull();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void waitNeverExceedsTheGiveUpTime(
            String name,
            InferenceDeploymentSpec spec,
            boolean custom,
            boolean first,
            GpuTopologyStatus topo,
            JobState job,
            Expect expect) {
        PreflightDecision d =
                PreflightGate.decide(spec, new PreflightGate.Planned("n", custom, first), topo, job, NOW, S);
        if (d instanceof PreflightDecision.Wait w) {
            assertThat(w.recheck())
                    .isPositive()
                    .isLessThanOrEqualTo(S.preflight().recheck());
        }
    }

    static Arguments row(
            String name,
            InferenceDeploymentSpec spec,
            boolean custom,
            boolean first,
            GpuTopologyStatus topo,
            JobState job,
            Expect expect) {
        return Arguments.of(name, spec, custom, first, topo, job, expect);
    }

    static InferenceDeploymentSpec spec(Consumer<InferenceDeploymentSpec> change) {
        return Fixtures.with(Fixtures.llama70b(8), change);
    }

    static GpuTopologyStatus topo(Measurement m) {
        GpuTopologyStatus t = TopologyFixtures.load("rtx-pro-6000-pcie-8");
        t.measurement = m;
        return t;
    }

    /** What the probe's --measure writes: time, GPU count, P2P verified; no selftest, no table. */
    static Measurement probeOnly(int world) {
        Measurement m = new Measurement();
        m.worldSize = world;
        m.time = NOW.toString();
        m.p2pVerified = true;
        return m;
    }

    static Measurement measured(int world, String failure, Instant at) {
        Measurement m = new Measurement();
        m.worldSize = world;
        m.time = at.toString();
        m.failure = failure;
        m.p2pVerified = failure == null;
        m.selftestPassed = failure == null;
        if (failure == null) {
            m.algorithmTable = List.of(new AlgorithmRange(8L << 20, "OneStage"));
        }
        return m;
    }
}
