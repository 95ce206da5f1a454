package io.tensorlane.operator.preflight;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.List;

/**
 * What the gate needs to know about the preflight Job of one node (a plain record, extracted from the Job and its pods
 * by {@link #of}).
 *
 * @param phase Absent (no Job), Active (created, not finished), Succeeded or Failed
 * @param createdAt the Job's creation time (null when absent)
 * @param finishedAt completion or failure time (null unless finished)
 * @param reason Failed: the Job condition's reason ({@code DeadlineExceeded}, {@code BackoffLimitExceeded})
 * @param message Failed: the Job condition's message
 * @param terminationMessage the preflight container's termination message (null when no pod reported one)
 * @param exitCode the preflight container's exit code (null when unknown)
 */
public record JobState(
        Phase phase,
        Instant createdAt,
        Instant finishedAt,
        String reason,
        String message,
        String terminationMessage,
        Integer exitCode) {

    /** Job phases the gate distinguishes. */
    public enum Phase {
        Absent,
        Active,
        Succeeded,
        Failed
    }

    public static final JobState ABSENT = new JobState(Phase.Absent, null, null, null, null, null, null);

    public static JobState active(Instant createdAt) {
        return new JobState(Phase.Active, createdAt, null, null, null, null, null);
    }

    public static JobState succeeded(Instant createdAt, Instant finishedAt, String terminationMessage) {
        return new JobState(Phase.Succeeded, createdAt, finishedAt, null, null, terminationMessage, 0);
    }

    public static JobState failed(
            Instant createdAt,
            Instant finishedAt,
            String reason,
            String message,
            String terminationMessage,
            Integer exitCode) {
        return new JobState(Phase.Failed, createdAt, finishedAt, reason, message, terminationMessage, exitCode);
    }

    public boolean finished() {
        return phase == Phase.Succeeded || phase == Phase.Failed;
    }

    /**
     * The state of {@code job} (null: absent) and its {@code pods}: finished when the Job has a Complete or Failed
     * condition that is True; the termination message is read from the newest pod whose {@code container} terminated.
     */
    public static JobState of(Job job, List<Pod> pods, String container) {
        if (job == null) {
            return ABSENT;
        }
        Instant created = time(job.getMetadata().getCreationTimestamp());
        JobCondition done = job.getStatus() == null || job.getStatus().getConditions() == null
                ? null
                : job.getStatus().getConditions().stream()
                        .filter(c -> "True".equals(c.getStatus())
                                && ("Complete".equals(c.getType()) || "Failed".equals(c.getType())))
                        .findFirst()
                        .orElse(null);
        if (done == null) {
            return active(created);
        }
        ContainerStateTerminated term = pods == null
                ? null
                : pods.stream()
                        .filter(p -> p.getStatus() != null && p.getStatus().getContainerStatuses() != null)
                        .sorted(Comparator.comparing((Pod p) ->
                                        String.valueOf(p.getMetadata().getCreationTimestamp()))
                                .reversed())
                        .flatMap(p -> p.getStatus().getContainerStatuses().stream())
                        .filter(cs -> container.equals(cs.getName()))
                        .map(JobState::terminated)
                        .filter(t -> t != null)
                        .findFirst()
                        .orElse(null);
        String msg = term == null ? null : term.getMessage();
        Integer exit = term == null ? null : term.getExitCode();
        Instant finished = time(done.getLastTransitionTime());
        if (finished == null && job.getStatus().getCompletionTime() != null) {
            finished = time(job.getStatus().getCompletionTime());
        }
        if ("Complete".equals(done.getType())) {
            return new JobState(Phase.Succeeded, created, finished, done.getReason(), done.getMessage(), msg, exit);
        }
        return failed(created, finished, done.getReason(), done.getMessage(), msg, exit);
    }

    private static ContainerStateTerminated terminated(ContainerStatus cs) {
        if (cs.getState() != null && cs.getState().getTerminated() != null) {
            return cs.getState().getTerminated();
        }
        return cs.getLastState() == null ? null : cs.getLastState().getTerminated();
    }

    static Instant time(String rfc3339) {
        if (rfc3339 == null) {
            return null;
        }
        try {
            return Instant.parse(rfc3339);
        } catch (DateTimeParseException e) {
            return null;
        }
    }
}
