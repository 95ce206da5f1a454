package io.tensorlane.operator.status;

import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.tensorlane.api.v1alpha1.InferenceDeployment;
import java.util.HashSet;
import java.util.Set;

/**
 * Which InferenceDeployments a change of one node (its Node or its GpuTopology) may concern, read from their status
 * alone: those still waiting for capacity (no phase yet, Pending, Unschedulable, DoesNotFit, Invalid) and those placed
 * on that node ({@code status.topology.nodes}). The secondary-to-primary mapping of both reconcilers of an
 * InferenceDeployment. Pure.
 */
public final class AffectedByNode {
    private AffectedByNode() {}

    /** Primaries a Node or GpuTopology event of {@code nodeName} may change: waiting for capacity, or placed there. */
    public static Set<ResourceID> primaries(String nodeName, Iterable<InferenceDeployment> primaries) {
        Set<ResourceID> out = new HashSet<>();
        for (InferenceDeployment p : primaries) {
            var s = p.getStatus();
            boolean waiting = s == null
                    || s.phase == null
                    || switch (s.phase) {
                        case Pending, Unschedulable, DoesNotFit, Invalid -> true;
                        default -> false;
                    };
            boolean placedThere =
                    s != null && s.topology != null && s.topology.nodes != null && s.topology.nodes.contains(nodeName);
            if (waiting || placedThere) {
                out.add(ResourceID.fromResource(p));
            }
        }
        return out;
    }
}
