package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/** Rollback and remediation bookkeeping; everything needed to resume after an operator restart. */
@JsonInclude(JsonInclude.Include.NON_EMPTY)
public class RollbackStatus {
    @JsonPropertyDescription(
            "Generation of the user spec these attempts belong to; reset when the user changes the spec.")
    public Long generation;

    @JsonPropertyDescription("Attempts made for this generation (rollbacks and remediation steps).")
    public Integer attempts;

    @JsonPropertyDescription(
            "Revision whose failure was last handled; a failure of this revision is not handled twice.")
    public String handledRevision;

    @JsonPropertyDescription("Earliest time (RFC 3339) the next attempt may be applied (backoff).")
    public String notBefore;

    @JsonPropertyDescription("What was done, oldest first.")
    public List<Attempt> history = new ArrayList<>();

    /** What one attempt did: go back to the last stable spec, or change the failed spec by one remediation step. */
    public enum Action {
        /** Back to status.lastStableSpec. */
        Rollback,
        /** spec.memory.fraction one step lower. */
        LowerMemoryFraction,
        /** spec.allreduce.maxMessageBytes halved (custom allreduce only). */
        ShrinkAllreduceBuffer,
        /** spec.allreduce.mode NCCL (custom allreduce only). */
        FallBackToNccl;

        /** Every remediation step (all but Rollback), in the order of the first round. */
        public static List<Action> remediations() {
            return List.of(LowerMemoryFraction, ShrinkAllreduceBuffer, FallBackToNccl);
        }
    }

    /** One rollback or remediation step. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public static class Attempt {
        @JsonPropertyDescription("1-based attempt number within the generation.")
        public Integer attempt;

        @JsonPropertyDescription("When it was applied (RFC 3339).")
        public String time;

        @JsonPropertyDescription("Action: Rollback, LowerMemoryFraction, ShrinkAllreduceBuffer or FallBackToNccl.")
        public Action action;

        @JsonPropertyDescription("What changed, e.g. 'memory.fraction 0.95 -> 0.90'.")
        public String change;

        @JsonPropertyDescription("The failure that caused it.")
        public String reason;
    }
}
