package io.tensorlane.operator.preflight;

import io.tensorlane.api.v1alpha1.Measurement;
import java.time.Duration;

/** What the preflight controller does for one node of a plan (the output of {@link PreflightGate#decide}). */
public sealed interface PreflightDecision {
    /** One line a person can read (logs, events). */
    String reason();

    /** Nothing to do: not needed, or already measured. */
    record None(String reason) implements PreflightDecision {}

    /**
     * Create the Job; {@code replaceExisting}: a finished Job of the same name is too old to use and is deleted first.
     */
    record StartJob(int worldSize, boolean replaceExisting, String reason) implements PreflightDecision {}

    /** The Job runs: look again after {@code recheck}. */
    record Wait(Duration recheck, String reason) implements PreflightDecision {}

    /**
     * Write {@code measurement} to {@code GpuTopology.status.measurement} ({@code success}: the custom allreduce is
     * proven; otherwise {@code measurement.failure} says why, and the planner switches to NCCL); {@code deleteJob}: the
     * Job overran its deadline and is deleted so its pod stops.
     */
    record Record(Measurement measurement, boolean success, boolean deleteJob, String reason)
            implements PreflightDecision {}
}
