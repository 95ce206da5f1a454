package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Rollout behaviour. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RolloutSpec {
    @Min(0)
    @Default("1")
    @JsonPropertyDescription(
            "Pods that may be unavailable during a rollout (maxSurge is 0: GPUs are scarce). Default 1.")
    public Integer maxUnavailable = 1;

    @Min(30)
    @Max(86400)
    @Default("900")
    @JsonPropertyDescription(
            "Seconds a rollout may take before it counts as failed (model loading is slow). Default 900.")
    public Integer progressDeadlineSeconds = 900;

    @Min(0)
    @Max(86400)
    @Default("60")
    @JsonPropertyDescription(
            "Seconds every replica must stay Ready, with no OOM, before the spec is recorded as stable. Default 60.")
    public Integer stabilityWindowSeconds = 60;

    @JsonPropertyDescription("Automatic rollback to the last stable spec, or remediation when there is none.")
    public AutoRollbackSpec autoRollback = new AutoRollbackSpec();

    /** Automatic rollback and remediation. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class AutoRollbackSpec {
        @Default("true")
        @JsonPropertyDescription(
                "Roll back / remediate automatically. When false the operator reports failures and does nothing else.")
        public Boolean enabled = true;

        @Min(0)
        @Max(20)
        @Default("3")
        @JsonPropertyDescription(
                "Remediation attempts for one spec generation before the deployment is marked Failed. Default 3.")
        public Integer maxAttempts = 3;

        @Default("true")
        @JsonPropertyDescription(
                "When there is no stable spec to return to, remediate: lower the memory fraction, then shrink "
                        + "the allreduce buffer, then fall back to NCCL. Default true.")
        public Boolean remediate = true;

        @Default("true")
        @JsonPropertyDescription(
                "Treat CrashLoopBackOff (without an OOM) as a failure that triggers rollback. Default true.")
        public Boolean onCrashLoop = true;

        @Default("true")
        @JsonPropertyDescription(
                "Treat an exceeded progress deadline as a failure that triggers rollback. Default true.")
        public Boolean onProgressDeadline = true;
    }
}
