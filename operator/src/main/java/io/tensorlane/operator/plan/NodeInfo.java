package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import java.util.Map;

/**
 * What the planner knows about one node: the reconciler builds it from the Node (labels, allocatable
 * {@code nvidia.com/gpu}), the GPUs already requested by pods bound to it, and the node's GpuTopology.
 *
 * @param name node name
 * @param labels node labels (matched against {@code spec.placement.nodeSelector})
 * @param allocatableGpus {@code status.allocatable["nvidia.com/gpu"]}
 * @param usedGpus GPUs requested by non-terminated pods on the node, excluding this deployment's own pods
 * @param topology the node's GpuTopology status; {@code null} when none exists
 * @param topologyStale the topology is older than the operator's limit (not trusted to permit the custom allreduce)
 */
public record NodeInfo(
        String name,
        Map<String, String> labels,
        int allocatableGpus,
        int usedGpus,
        GpuTopologyStatus topology,
        boolean topologyStale) {

    public NodeInfo {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
    }

    /** GPUs not requested by other pods. */
    public int freeGpus() {
        return Math.max(0, allocatableGpus - usedGpus);
    }
}
