package io.tensorlane.operator.rollback;

import io.tensorlane.api.v1alpha1.FailureRecord;
import java.time.Instant;

/**
 * A failure seen on a pod of the current revision.
 *
 * @param message details: the termination message (or its OOM line), or the Deployment condition message
 */
public record FailureSignal(Kind kind, String pod, String revision, String message, Instant time) {

    /** Failure kinds, most specific first. */
    public enum Kind {
        /** CUDA OOM: our runtime's JSON termination message, or an engine's OOM log line. */
        CudaOutOfMemory,
        /** The kernel killed the container for host memory. */
        OOMKilled,
        /** A container restarts repeatedly without an OOM (secondary signal, spec.rollout.autoRollback.onCrashLoop). */
        CrashLoopBackOff,
        /** The Deployment did not progress in time (secondary, spec.rollout.autoRollback.onProgressDeadline). */
        ProgressDeadlineExceeded;

        /** GPU or host memory exhaustion: what memory remediation can fix. */
        public boolean oom() {
            return this == CudaOutOfMemory || this == OOMKilled;
        }
    }

    /** The status form ({@code status.lastFailure}). */
    public FailureRecord toRecord() {
        FailureRecord r = new FailureRecord();
        r.reason = kind.name();
        r.pod = pod;
        r.revision = revision;
        r.message = message;
        r.time = time == null ? null : time.toString();
        return r;
    }
}
