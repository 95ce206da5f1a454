package io.tensorlane.operator.preflight;

import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.Measurement;
import io.tensorlane.operator.TensorlaneConfig;
import io.tensorlane.operator.engine.EngineProfile;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.plan.NodeInfo;
import io.tensorlane.operator.plan.Plan;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * The pure preflight decision. A node needs a preflight when a deployment whose engine the preflight measures
 * ({@link EngineProfile#preflight()}: Tensorlane's runtime) with tensor parallelism above 1 is planned with the
 * custom allreduce on it and its GpuTopology has no recent measurement for that many GPUs (neither a success nor a
 * failure). Only the first rollout waits for it (nothing was applied yet).
 */
public final class PreflightGate {
    private PreflightGate() {}

    /**
     * What the plan says about one node.
     *
     * @param node the node name
     * @param custom the plan chose the custom allreduce ({@code status.allreduce.mode == Custom})
     * @param firstRollout nothing was applied for this deployment yet ({@code status.lastAppliedSpec} is absent)
     */
    public record Planned(String node, boolean custom, boolean firstRollout) {}

    /** The decision for one node; {@code job} is the state of that node's preflight Job for this deployment. */
    public static PreflightDecision decide(
            InferenceDeploymentSpec spec,
            Planned planned,
            GpuTopologyStatus topology,
            JobState job,
            Instant now,
            TensorlaneConfig settings) {
        String notNeeded = notNeeded(spec, planned.custom(), topology, now, settings.measurementMaxAge());
        if (notNeeded != null) {
            return new PreflightDecision.None(notNeeded);
        }
        if (!planned.firstRollout()) {
            return new PreflightDecision.None("already rolled out: a preflight runs only before the first rollout");
        }
        int world = spec.parallelism.tensor;
        String node = planned.node();
        switch (job.phase()) {
            case Absent -> {
                return new PreflightDecision.StartJob(
                        world,
                        false,
                        "node " + node + " has no recent measurement for " + world
                                + " GPUs: running selftest + bench there");
            }
            case Active -> {
                Instant created = job.createdAt() == null ? now : job.createdAt();
                Instant giveUp = created.plus(settings.preflight().deadline())
                        .plus(settings.preflight().grace());
                if (!now.isBefore(giveUp)) {
                    String why = "the preflight Job did not finish within "
                            + (settings.preflight().deadline().toSeconds()
                                    + settings.preflight().grace().toSeconds()) + " s (deadline "
                            + settings.preflight().deadline().toSeconds() + " s + grace)";
                    return new PreflightDecision.Record(failure(world, why, null, now), false, true, why);
                }
                Duration left = Duration.between(now, giveUp);
                Duration recheck = left.compareTo(settings.preflight().recheck()) < 0
                        ? left
                        : settings.preflight().recheck();
                return new PreflightDecision.Wait(recheck, "preflight on node " + node + " running since " + created);
            }
            default -> {
                Instant finished = job.finishedAt() == null ? now : job.finishedAt();
                if (settings.measurementMaxAge() != null
                        && Duration.between(finished, now).compareTo(settings.measurementMaxAge()) > 0) {
                    return new PreflightDecision.StartJob(
                            world,
                            true,
                            "the preflight Job on node " + node + " finished at " + finished
                                    + ", too long ago to trust: running it again");
                }
                return job.phase() == JobState.Phase.Succeeded
                        ? succeeded(job, world, finished)
                        : failedJob(job, world, finished, settings);
            }
        }
    }

    /**
     * Why the first rollout must wait, or null when it may go ahead: some node of the plan still needs its preflight.
     * The InferenceDeployment reconciler calls this before applying anything.
     */
    public static String holdReason(
            InferenceDeploymentSpec spec,
            Plan plan,
            List<NodeInfo> nodes,
            boolean firstRollout,
            Instant now,
            Duration measurementMaxAge) {
        if (!firstRollout || plan == null || !plan.ok() || plan.placement() == null || plan.allreduce() == null) {
            return null;
        }
        for (String node : plan.placement().nodes()) {
            GpuTopologyStatus t = nodes.stream()
                    .filter(n -> n.name().equals(node))
                    .findFirst()
                    .map(NodeInfo::topology)
                    .orElse(null);
            if (notNeeded(spec, plan.allreduce().custom(), t, now, measurementMaxAge) == null) {
                return "waiting for the preflight (selftest + bench) on node " + node + " before the first rollout";
            }
        }
        return null;
    }

    /** Why no preflight is needed for this node, or null when one is. */
    static String notNeeded(
            InferenceDeploymentSpec spec,
            boolean plannedCustom,
            GpuTopologyStatus topology,
            Instant now,
            Duration maxAge) {
        EngineProfile engine = EngineProfiles.of(spec);
        if (!engine.preflight()) {
            return "engine " + engine.type() + " runs its own allreduce";
        }
        int tensor = spec.parallelism == null || spec.parallelism.tensor == null ? 1 : spec.parallelism.tensor;
        if (tensor <= 1) {
            return "tensor parallelism 1: no allreduce";
        }
        if (spec.allreduce != null && spec.allreduce.mode == AllreduceMode.NCCL) {
            return "allreduce.mode NCCL";
        }
        if (!plannedCustom) {
            return "the plan does not use the custom allreduce";
        }
        if (topology == null) {
            return "no GpuTopology for the node";
        }
        Measurement m = recent(topology.measurement, now, maxAge);
        if (m != null && m.failure != null && !m.failure.isBlank()) {
            return "a recent preflight failed (" + m.failure + "): NCCL is used";
        }
        // a preflight's success: the selftest passed and a table was measured (a measurement with neither, e.g. one an
        // older probe wrote, is not a preflight; the probe now keeps its P2P results in the links)
        if (m != null
                && m.worldSize != null
                && m.worldSize == tensor
                && Boolean.TRUE.equals(m.selftestPassed)
                && m.algorithmTable != null
                && !m.algorithmTable.isEmpty()) {
            return "measured" + (m.time == null ? "" : " at " + m.time) + " for " + tensor + " GPUs";
        }
        return null;
    }

    /** The measurement when recent enough to trust (no time: trusted, as the planner does), else null. */
    static Measurement recent(Measurement m, Instant now, Duration maxAge) {
        if (m == null || m.time == null || maxAge == null) {
            return m;
        }
        try {
            return Duration.between(Instant.parse(m.time), now).compareTo(maxAge) > 0 ? null : m;
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static PreflightDecision succeeded(JobState job, int world, Instant finished) {
        Measurement m;
        try {
            m = PreflightMessage.parse(job.terminationMessage());
        } catch (IllegalArgumentException e) {
            String why = "the preflight Job succeeded but its result is unreadable: " + e.getMessage();
            return new PreflightDecision.Record(failure(world, why, null, finished), false, false, why);
        }
        String problem = PreflightMessage.problem(m, world);
        m.time = stamp(finished);
        if (problem != null) {
            m.failure = problem;
            if (m.worldSize == null) {
                m.worldSize = world;
            }
            return new PreflightDecision.Record(m, false, false, "preflight failed: " + problem);
        }
        return new PreflightDecision.Record(
                m,
                true,
                false,
                "preflight passed: P2P verified, selftest passed, " + m.algorithmTable.size() + " algorithm range(s), "
                        + m.latencies.size() + " latency row(s)");
    }

    private static PreflightDecision failedJob(JobState job, int world, Instant finished, TensorlaneConfig settings) {
        Measurement reported = null;
        try {
            reported = job.terminationMessage() == null ? null : PreflightMessage.parse(job.terminationMessage());
        } catch (IllegalArgumentException e) {
            // not our JSON (e.g. the log tail of a crash): described below
        }
        String why;
        if ("DeadlineExceeded".equals(job.reason())) {
            why = "the preflight timed out after "
                    + settings.preflight().deadline().toSeconds() + " s (Job DeadlineExceeded)";
        } else if (reported != null && reported.failure != null && !reported.failure.isBlank()) {
            why = reported.failure;
        } else if (job.terminationMessage() != null && !job.terminationMessage().isBlank()) {
            why = "the preflight exited" + (job.exitCode() == null ? "" : " with code " + job.exitCode()) + ": "
                    + PreflightMessage.abbreviate(job.terminationMessage());
        } else {
            why = "the preflight Job failed" + (job.exitCode() == null ? "" : " (exit code " + job.exitCode() + ")")
                    + (job.reason() == null ? "" : ": " + job.reason())
                    + (job.message() == null ? "" : " — " + job.message());
        }
        return new PreflightDecision.Record(
                failure(world, why, reported, finished), false, false, "preflight failed: " + why);
    }

    private static Measurement failure(int world, String why, Measurement reported, Instant at) {
        Measurement m = reported != null ? reported : new Measurement();
        m.failure = why;
        m.worldSize = m.worldSize == null ? world : m.worldSize;
        m.time = stamp(at);
        return m;
    }

    private static String stamp(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS).toString();
    }
}
