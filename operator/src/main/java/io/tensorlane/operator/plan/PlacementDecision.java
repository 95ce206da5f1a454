package io.tensorlane.operator.plan;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirementBuilder;
import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.TopologyChoice;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The node class the plan targets: every node whose topology labels equal {@link #labels} (and that carries the
 * user's node selector and at least {@code tensor} GPUs). Pods get node affinity on these labels, not on host
 * names, so they stay reschedulable.
 *
 * @param nodes nodes of the class that currently have enough free GPUs, sorted by name
 * @param labels topology label values of the class ({@link TopologyLabels} keys, except the GPU count)
 * @param minGpuCount the GPU count a node needs (tensor parallelism); affinity {@code gpu-count Gt minGpuCount-1}
 * @param nodeSelector the user's extra node labels (spec.placement.nodeSelector)
 * @param product GPU product as the probe reports it (unsanitized)
 * @param interconnect NVLink, PCIe, Mixed or NotApplicable
 * @param p2p Full, Partial, None or NotApplicable
 * @param gpuMemoryBytes smallest per-GPU memory in the class
 * @param source probe or heuristic (of the representative)
 * @param representative the topology the allreduce and memory decisions were made for (first node of the class)
 */
public record PlacementDecision(
        List<String> nodes,
        Map<String, String> labels,
        int minGpuCount,
        Map<String, String> nodeSelector,
        String product,
        String interconnect,
        String p2p,
        long gpuMemoryBytes,
        String source,
        GpuTopologyStatus representative) {

    public PlacementDecision {
        nodes = List.copyOf(nodes);
        labels = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(labels));
        nodeSelector = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(nodeSelector));
    }

    /**
     * Node-affinity requirements (one {@code nodeSelectorTerm}, all ANDed): the class labels with {@code In}, the
     * GPU count with {@code Gt}, then the user's selector labels with {@code In}. Ordered deterministically so the
     * rendered pod template hash is stable.
     */
    public List<NodeSelectorRequirement> affinityRequirements() {
        List<NodeSelectorRequirement> out = new ArrayList<>();
        labels.forEach((k, v) -> out.add(new NodeSelectorRequirementBuilder()
                .withKey(k)
                .withOperator("In")
                .withValues(v)
                .build()));
        out.add(new NodeSelectorRequirementBuilder()
                .withKey(TopologyLabels.GPU_COUNT)
                .withOperator("Gt")
                .withValues(Integer.toString(minGpuCount - 1))
                .build());
        nodeSelector.entrySet().stream()
                .sorted(Map.Entry.comparingByKey())
                .forEach(e -> out.add(new NodeSelectorRequirementBuilder()
                        .withKey(e.getKey())
                        .withOperator("In")
                        .withValues(e.getValue())
                        .build()));
        return out;
    }

    /** The status form ({@code status.topology}). */
    public TopologyChoice toStatus() {
        TopologyChoice c = new TopologyChoice();
        c.nodes = new ArrayList<>(nodes);
        c.product = product;
        c.interconnect = interconnect;
        c.p2p = p2p;
        c.gpuMemoryBytes = gpuMemoryBytes;
        c.source = source;
        return c;
    }
}
