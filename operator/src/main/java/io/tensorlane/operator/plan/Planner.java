package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.PlacementSpec.InterconnectRequirement;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * Entry point of the pure planner: validate → placement → allreduce → memory. No I/O; same input, same plan.
 *
 * <p>Placement is best fit: the node classes come in {@link Placement#fittingClasses} order (custom allreduce
 * possible, fewest GPUs per node that hold the model's tensor parallelism, NVLink before PCIe, larger GPU memory,
 * labels) and the plan takes the first class with free GPUs whose memory plan fits. DOES_NOT_FIT only when no class
 * holds the model; its numbers are the best class's. When the model fits only on a class without free GPUs now, the
 * answer is UNSCHEDULABLE (it waits for GPUs there) rather than DOES_NOT_FIT.
 */
public final class Planner {
    private Planner() {}

    /**
     * The class the deployment's pods run on now goes first (when it still fits): best fit decides where a deployment
     * starts, not where a running one goes, so it never moves because GPUs freed up in a better-fitting class.
     */
    static List<Placement.NodeClass> stickToCurrent(List<Placement.NodeClass> classes, Set<String> current) {
        if (current.isEmpty()) {
            return classes;
        }
        List<Placement.NodeClass> out = new ArrayList<>(classes);
        out.sort(Comparator.comparingInt(c ->
                c.members().stream().anyMatch(v -> current.contains(v.node().name())) ? 0 : 1));
        return out;
    }

    /**
     * Plans an effective spec (the user's spec, or the rollback/remediation spec) against the cluster's nodes.
     *
     * @param effective the spec to plan; never modified
     * @param nodes every node the operator knows (with or without GPUs / GpuTopology)
     * @param settings planning time and limits, and the engine's own spec checks
     */
    public static Plan plan(InferenceDeploymentSpec effective, List<NodeInfo> nodes, PlannerSettings settings) {
        String invalid = SpecValidator.validate(effective, settings.engineCheck());
        if (invalid != null) {
            return Plan.failed(Outcome.INVALID_SPEC, invalid);
        }
        InferenceDeploymentSpec spec = SpecValidator.withDefaults(effective);
        int tensor = spec.parallelism.tensor;
        boolean customForced = tensor > 1 && spec.allreduce.mode == AllreduceMode.Custom;
        InterconnectRequirement required = spec.placement.interconnect;

        List<Placement.Verdict> verdicts =
                Placement.judge(nodes, tensor, required, spec.placement.nodeSelector, customForced, settings);
        List<Placement.NodeClass> fitting = Placement.fittingClasses(verdicts, tensor, required);
        List<Placement.NodeClass> classes =
                stickToCurrent(fitting.stream().filter(c -> !c.free().isEmpty()).toList(), settings.currentNodes());
        if (classes.isEmpty()) {
            String message = Placement.unschedulableMessage(verdicts, tensor, required, customForced);
            boolean anyFits = verdicts.stream().anyMatch(Placement.Verdict::fits);
            boolean anyP2p = verdicts.stream()
                    .filter(Placement.Verdict::fits)
                    .anyMatch(v -> v.node().topology().summary.p2p == P2p.Full);
            if (customForced && anyFits && !anyP2p) {
                return Plan.failed(
                        Outcome.INVALID_SPEC,
                        "allreduce.mode Custom needs full P2P between the GPUs, but no node "
                                + "that satisfies the placement has it; use mode Auto or NCCL (" + message + ")");
            }
            return Plan.failed(Outcome.UNSCHEDULABLE, message);
        }

        // best fit first (Placement.fittingClasses); the first class whose memory plan fits wins
        Plan best = null;
        List<String> tooSmall = new ArrayList<>();
        for (Placement.NodeClass c : classes) {
            Plan p = planOn(c, spec, tensor, customForced, settings, tooSmall);
            if (p.outcome() == Outcome.OK) {
                return p;
            }
            best = best == null ? p : best;
            tooSmall.add(c.describe());
        }
        // none of the classes with free GPUs holds the model: one without free GPUs now may (wait for it)
        for (Placement.NodeClass c : fitting) {
            if (c.free().isEmpty()
                    && planOn(c, spec, tensor, customForced, settings, tooSmall).ok()) {
                return Plan.failed(
                        Outcome.UNSCHEDULABLE,
                        "no node with " + tensor + " free GPU" + (tensor == 1 ? "" : "s")
                                + " in a class the model fits on (" + c.describe() + "; " + nodeProblems(c)
                                + "); it does not fit on "
                                + String.join(", ", tooSmall) + ": " + best.message());
            }
        }
        List<String> tried = fitting.stream()
                .map(c -> c.describe() + (c.free().isEmpty() ? " (no free GPUs)" : ""))
                .toList();
        return new Plan(
                Outcome.DOES_NOT_FIT,
                best.message() + " (node classes tried, best first: " + String.join(", ", tried) + ")",
                best.placement(),
                best.allreduce(),
                best.memory(),
                best.warnings());
    }

    /**
     * Placement, allreduce and memory plan on one class: OK, or DOES_NOT_FIT with the memory numbers.
     *
     * @param skipped classes tried before this one whose memory the model did not fit (named in the OK message)
     */
    private static Plan planOn(
            Placement.NodeClass chosen,
            InferenceDeploymentSpec spec,
            int tensor,
            boolean customForced,
            PlannerSettings settings,
            List<String> skipped) {
        NodeInfo rep = chosen.representative();
        String blocker = chosen.customBlocker();
        List<String> warnings = new ArrayList<>();
        if (customForced && blocker != null) {
            warnings.add("allreduce.mode Custom: a node the pods may land on cannot run it (" + blocker + ")");
        }
        chosen.members().stream()
                .filter(v -> v.node().topologyStale())
                .findFirst()
                .ifPresent(v -> warnings.add("GpuTopology of " + v.node().name()
                        + " is stale (older than the operator's limit); the plan uses it as last seen"));
        int slots = chosen.podSlots(tensor);
        if (slots < spec.replicas) {
            warnings.add(spec.replicas + " replicas but GPUs for only " + slots + " pod(s) of " + tensor
                    + " are free on matching nodes now; the rest stay Pending until GPUs free up");
        }
        AllreduceChoice allreduce = AllreduceChooser.choose(spec.allreduce, tensor, rep.topology(), blocker, settings);
        var s = rep.topology().summary;
        PlacementDecision placement = new PlacementDecision(
                chosen.free().stream().map(v -> v.node().name()).toList(),
                chosen.labels(),
                tensor,
                spec.placement.nodeSelector,
                s.product,
                tensor > 1 ? s.interconnect.name() : "NotApplicable",
                tensor > 1 ? s.p2p.name() : "NotApplicable",
                chosen.minGpuMemory(),
                rep.topology().source == null ? null : rep.topology().source.name(),
                rep.topology());

        Double fraction = spec.memory.isAuto() ? null : Double.valueOf(spec.memory.fraction);
        MemoryPlanner.Result memory = MemoryPlanner.plan(spec, tensor, placement.gpuMemoryBytes(), allreduce, fraction);
        warnings.addAll(memory.plan().warnings());
        if (memory.doesNotFit() != null) {
            return new Plan(Outcome.DOES_NOT_FIT, memory.doesNotFit(), placement, allreduce, memory.plan(), warnings);
        }
        String skippedNote = skipped.isEmpty() ? "" : " (the model does not fit on " + String.join(", ", skipped) + ")";
        return new Plan(
                Outcome.OK,
                "placed on " + placement.nodes().size() + " node(s) of class " + placement.labels() + skippedNote + "; "
                        + allreduce.reason(),
                placement,
                allreduce,
                memory.plan(),
                warnings);
    }

    /** "gpu-nvlink-0: 8 GPUs NVLink but 6 free; …" for the members of a class, at most the message limit. */
    private static String nodeProblems(Placement.NodeClass c) {
        List<String> shown = c.members().stream()
                .limit(Placement.MAX_NODES_IN_MESSAGE)
                .map(v -> v.node().name() + ": " + v.problem())
                .toList();
        int more = c.members().size() - shown.size();
        return String.join("; ", shown) + (more > 0 ? "; … and " + more + " more" : "");
    }

    /** What auto would pick for this spec on the plan's hardware (remediation lowers from it). */
    public static double autoFraction(InferenceDeploymentSpec effective, Plan plan) {
        InferenceDeploymentSpec spec = SpecValidator.withDefaults(effective);
        return MemoryPlanner.plan(
                        spec, spec.parallelism.tensor, plan.placement().gpuMemoryBytes(), plan.allreduce(), null)
                .autoFraction();
    }
}
