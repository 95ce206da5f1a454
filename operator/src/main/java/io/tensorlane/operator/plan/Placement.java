package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.GpuTopologyStatus;
import io.tensorlane.api.v1alpha1.PlacementSpec.InterconnectRequirement;
import io.tensorlane.api.v1alpha1.TopologySummary;
import io.tensorlane.api.v1alpha1.TopologySummary.Interconnect;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import io.tensorlane.topology.TopologyClassifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Placement: which nodes can host one pod of {@code tensor} GPUs, grouped into classes of identical topology labels
 * (what node affinity can select on), ordered best fit first ({@link #fittingClasses}).
 */
public final class Placement {
    /** At most this many nodes are named in an Unschedulable message. */
    static final int MAX_NODES_IN_MESSAGE = 8;

    /**
     * One node's verdict.
     *
     * @param problem why the node cannot host a pod now (null when it can)
     * @param fits whether it could host one if it had free GPUs (placement, selector, product, GPU count all satisfied)
     * @param customBlocker why the custom allreduce cannot run there (null when it can)
     */
    public record Verdict(NodeInfo node, String problem, boolean fits, String customBlocker) {}

    /**
     * Nodes sharing the same topology labels.
     *
     * @param members every node of the class that fits (with or without free GPUs): affinity selects all of them
     * @param free the members with enough free GPUs now
     */
    public record NodeClass(Map<String, String> labels, List<Verdict> members, List<Verdict> free) {
        /** First member by name: the topology decisions are made for. */
        public NodeInfo representative() {
            return members.get(0).node();
        }

        /** "node: reason" for the first member that cannot run the custom allreduce, or null. */
        public String customBlocker() {
            return members.stream()
                    .filter(v -> v.customBlocker() != null)
                    .findFirst()
                    .map(v -> v.node().name() + ": " + v.customBlocker())
                    .orElse(null);
        }

        /** Pods of {@code tensor} GPUs that fit into the free GPUs of the class now. */
        public int podSlots(int tensor) {
            return free.stream().mapToInt(v -> v.node().freeGpus() / tensor).sum();
        }

        /** Fewest GPUs of a member (every member has at least tensor). */
        int minGpuCount() {
            return members.stream()
                    .mapToInt(v -> v.node().topology().summary.gpuCount)
                    .min()
                    .orElse(0);
        }

        /** The label values, e.g. "NVIDIA-L40S/PCIe/Full" (for messages). */
        public String describe() {
            return String.join("/", labels.values());
        }

        long minGpuMemory() {
            return members.stream()
                    .map(v -> v.node().topology().summary.gpuMemoryBytes)
                    .filter(java.util.Objects::nonNull)
                    .mapToLong(Long::longValue)
                    .min()
                    .orElse(0);
        }
    }

    private Placement() {}

    /** Judges every node for {@code tensor} GPUs under the placement requirement and selector. */
    public static List<Verdict> judge(
            List<NodeInfo> nodes,
            int tensor,
            InterconnectRequirement required,
            Map<String, String> selector,
            boolean customForced,
            PlannerSettings settings) {
        List<Verdict> out = new ArrayList<>();
        for (NodeInfo n :
                nodes.stream().sorted(Comparator.comparing(NodeInfo::name)).toList()) {
            String blocker = tensor > 1 ? AllreduceChooser.customBlocker(n, settings, customForced) : null;
            String fitProblem = fitProblem(n, tensor, required, selector);
            String problem = fitProblem;
            if (problem == null && n.freeGpus() < tensor) {
                TopologySummary s = n.topology().summary;
                problem = s.gpuCount + " GPUs " + s.interconnect + " but " + n.freeGpus() + " free";
            }
            if (problem == null && customForced && blocker != null) {
                problem = n.topology().summary.gpuCount + " GPUs, " + blocker;
            }
            out.add(new Verdict(n, problem, fitProblem == null, blocker));
        }
        return out;
    }

    private static String fitProblem(
            NodeInfo n, int tensor, InterconnectRequirement required, Map<String, String> selector) {
        GpuTopologyStatus t = n.topology();
        if (t == null) {
            return n.allocatableGpus() > 0 ? "no GpuTopology" : "no GPUs";
        }
        TopologySummary s = t.summary;
        if (s == null || s.gpuCount == null || s.interconnect == null || s.p2p == null || s.product == null) {
            return "GpuTopology not classified";
        }
        for (Map.Entry<String, String> e : selector.entrySet()) {
            if (!e.getValue().equals(n.labels().get(e.getKey()))) {
                return "label " + e.getKey() + "=" + e.getValue() + " missing";
            }
        }
        if (s.gpuCount < tensor) {
            String p2p = s.p2p == P2p.NotApplicable ? "" : ", P2P " + s.p2p;
            return s.gpuCount + " GPUs" + p2p + " (needs " + tensor + ")";
        }
        if (tensor > 1 && TopologyClassifier.MIXED_PRODUCT.equals(s.product)) {
            return s.gpuCount + " GPUs of mixed products";
        }
        if (required == InterconnectRequirement.NVLink && s.interconnect != Interconnect.NVLink
                || required == InterconnectRequirement.PCIe && s.interconnect != Interconnect.PCIe) {
            return s.gpuCount + " GPUs " + s.interconnect + " (needs " + required + ")";
        }
        return null;
    }

    /**
     * Groups fitting nodes by the labels affinity selects on (product; plus interconnect and P2P for tensor > 1) and
     * orders the classes best first; only classes with at least one node with free GPUs are returned (see
     * {@link #fittingClasses} for the order).
     */
    public static List<NodeClass> classes(List<Verdict> verdicts, int tensor, InterconnectRequirement required) {
        return fittingClasses(verdicts, tensor, required).stream()
                .filter(c -> !c.free().isEmpty())
                .toList();
    }

    /**
     * Every class of fitting nodes (with or without free GPUs now), best fit first:
     * <ol>
     *   <li>the custom allreduce can run on every member (tensor > 1 only): it is the faster path;</li>
     *   <li>fewest GPUs per node that still hold {@code tensor} (smallest member): a 2-GPU model goes to the 2-GPU
     *       boxes and leaves the 8-GPU boxes whole for the models that need all 8 — taking the biggest box first is
     *       what left an 8-GPU model Unschedulable next to idle 2-GPU nodes;</li>
     *   <li>NVLink before PCIe (before Mixed / NotApplicable);</li>
     *   <li>larger GPU memory (smallest member): more KV cache;</li>
     *   <li>the labels as text, so the order is total and deterministic.</li>
     * </ol>
     * The order depends only on the hardware, never on how many GPUs are free: free GPUs change as other pods come
     * and go, and following them would move a running deployment between classes (a rollout each time). Whether the
     * model fits into a class's GPU memory is the {@link Planner}'s next step: it takes the first class that fits.
     */
    public static List<NodeClass> fittingClasses(List<Verdict> verdicts, int tensor, InterconnectRequirement required) {
        Map<String, List<Verdict>> byKey = new TreeMap<>();
        Map<String, Map<String, String>> labelsByKey = new LinkedHashMap<>();
        for (Verdict v : verdicts) {
            if (!v.fits()) {
                continue;
            }
            Map<String, String> labels = classLabels(v.node().topology(), tensor, required);
            String key = labels.toString();
            byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(v);
            labelsByKey.put(key, labels);
        }
        List<NodeClass> out = new ArrayList<>();
        byKey.forEach((key, members) -> out.add(new NodeClass(
                labelsByKey.get(key),
                members,
                members.stream().filter(v -> v.problem() == null).toList())));
        out.sort(bestFirst(tensor));
        return out;
    }

    /** The order of {@link #fittingClasses}. */
    static Comparator<NodeClass> bestFirst(int tensor) {
        return Comparator.<NodeClass>comparingInt(c -> tensor > 1 && c.customBlocker() == null ? 0 : 1)
                .thenComparingInt(NodeClass::minGpuCount)
                .thenComparingInt(
                        c -> c.representative().topology().summary.interconnect.ordinal())
                .thenComparing(Comparator.comparingLong(NodeClass::minGpuMemory).reversed())
                .thenComparing(c -> c.labels().toString());
    }

    /**
     * The labels of a node's class, in affinity order: product, interconnect, P2P. Interconnect and P2P only matter
     * for tensor > 1, except that a required interconnect is always selected on.
     */
    static Map<String, String> classLabels(GpuTopologyStatus t, int tensor, InterconnectRequirement required) {
        Map<String, String> all = TopologyLabels.forTopology(t);
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put(TopologyLabels.GPU_PRODUCT, all.get(TopologyLabels.GPU_PRODUCT));
        if (tensor > 1 || required != null && required != InterconnectRequirement.Any) {
            labels.put(TopologyLabels.INTERCONNECT, all.get(TopologyLabels.INTERCONNECT));
        }
        if (tensor > 1) {
            labels.put(TopologyLabels.P2P, all.get(TopologyLabels.P2P));
        }
        return labels;
    }

    /** "no node with 8 free GPUs and full P2P; h200-0: 8 GPUs NVLink but 6 free; rtx4090-0: 4 GPUs, P2P None". */
    public static String unschedulableMessage(
            List<Verdict> verdicts, int tensor, InterconnectRequirement required, boolean customForced) {
        StringBuilder sb = new StringBuilder("no node with ")
                .append(tensor)
                .append(" free GPU")
                .append(tensor == 1 ? "" : "s");
        if (required != null && required != InterconnectRequirement.Any) {
            sb.append(" over ").append(required);
        }
        if (customForced) {
            sb.append(" and full P2P (allreduce.mode Custom)");
        }
        if (verdicts.isEmpty()) {
            return sb.append("; the cluster has no nodes").toString();
        }
        // nodes with a GpuTopology first: in a large cluster the CPU-only nodes say little
        List<Verdict> listed = new ArrayList<>(
                verdicts.stream().filter(v -> v.node().topology() != null).toList());
        listed.addAll(verdicts.stream().filter(v -> v.node().topology() == null).toList());
        int shown = 0;
        for (Verdict v : listed) {
            if (shown == MAX_NODES_IN_MESSAGE) {
                sb.append("; … and ").append(verdicts.size() - shown).append(" more");
                break;
            }
            sb.append("; ").append(v.node().name()).append(": ").append(v.problem());
            shown++;
        }
        return sb.toString();
    }
}
