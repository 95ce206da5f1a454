package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.AllreduceDecision;
import io.tensorlane.api.v1alpha1.MemoryPlanStatus;
import io.tensorlane.api.v1alpha1.TopologyChoice;
import java.util.List;

/**
 * The planner's answer for one effective spec. When {@code outcome} is not OK, {@code message} says why (it becomes
 * the message of the InvalidSpec / Unschedulable / DoesNotFit condition) and the parts decided so far may be set
 * (e.g. DOES_NOT_FIT carries placement, allreduce and the memory numbers).
 *
 * @param warnings warnings for a person (also in {@code memory.warnings()} where they concern memory); an OK plan
 *     with {@code memory.fractionTooHigh()} should raise the MemoryFractionTooHigh condition
 */
public record Plan(
        Outcome outcome,
        String message,
        PlacementDecision placement,
        AllreduceChoice allreduce,
        MemoryPlan memory,
        List<String> warnings) {

    public Plan {
        warnings = warnings == null ? List.of() : List.copyOf(warnings);
    }

    static Plan failed(Outcome outcome, String message) {
        return new Plan(outcome, message, null, null, null, List.of());
    }

    public boolean ok() {
        return outcome == Outcome.OK;
    }

    /** {@code status.topology}, or null when no placement was found. */
    public TopologyChoice topologyStatus() {
        return placement == null ? null : placement.toStatus();
    }

    /** {@code status.allreduce}, or null when not decided. */
    public AllreduceDecision allreduceStatus() {
        return allreduce == null ? null : allreduce.toStatus();
    }

    /** {@code status.memoryPlan}, or null when not computed. */
    public MemoryPlanStatus memoryStatus() {
        return memory == null ? null : memory.toStatus();
    }
}
