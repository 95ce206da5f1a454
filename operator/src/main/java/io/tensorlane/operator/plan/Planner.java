package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.PlacementSpec.InterconnectRequirement;
import io.tensorlane.api.v1alpha1.TopologySummary.P2p;
import java.util.ArrayList;
import java.util.List;

/**
 * Entry point of the pure planner: validate → placement → allreduce → memory. No I/O; same input, same plan.
 */
public final class Planner {
  private Planner() {
  }

  /**
   * Plans an effective spec (the user's spec, or the rollback/remediation spec) against the cluster's nodes.
   *
   * @param effective the spec to plan; never modified
   * @param nodes every node the operator knows (with or without GPUs / GpuTopology)
   * @param settings planning time and limits
   */
  public static Plan plan(InferenceDeploymentSpec effective, List<NodeInfo> nodes, PlannerSettings settings) {
    String invalid = SpecValidator.validate(effective);
    if (invalid != null) {
      return Plan.failed(Outcome.INVALID_SPEC, invalid);
    }
    InferenceDeploymentSpec spec = SpecValidator.withDefaults(effective);
    int tensor = spec.parallelism.tensor;
    boolean customForced = tensor > 1 && spec.allreduce.mode == AllreduceMode.Custom;
    InterconnectRequirement required = spec.placement.interconnect;

    List<Placement.Verdict> verdicts = Placement.judge(nodes, tensor, required, spec.placement.nodeSelector,
        customForced, settings);
    List<Placement.NodeClass> classes = Placement.classes(verdicts, tensor, required);
    if (classes.isEmpty()) {
      String message = Placement.unschedulableMessage(verdicts, tensor, required, customForced);
      boolean anyFits = verdicts.stream().anyMatch(Placement.Verdict::fits);
      boolean anyP2p = verdicts.stream().filter(Placement.Verdict::fits)
          .anyMatch(v -> v.node().topology().summary.p2p == P2p.Full);
      if (customForced && anyFits && !anyP2p) {
        return Plan.failed(Outcome.INVALID_SPEC, "allreduce.mode Custom needs full P2P between the GPUs, but no node "
            + "that satisfies the placement has it; use mode Auto or NCCL (" + message + ")");
      }
      return Plan.failed(Outcome.UNSCHEDULABLE, message);
    }

    Placement.NodeClass chosen = classes.get(0);
    NodeInfo rep = chosen.representative();
    String blocker = chosen.customBlocker();
    List<String> warnings = new ArrayList<>();
    if (customForced && blocker != null) {
      warnings.add("allreduce.mode Custom: a node the pods may land on cannot run it (" + blocker + ")");
    }
    chosen.members().stream().filter(v -> v.node().topologyStale()).findFirst().ifPresent(v -> warnings.add(
        "GpuTopology of " + v.node().name() + " is stale (older than the operator's limit); the plan uses it as last seen"));
    int slots = chosen.podSlots(tensor);
    if (slots < spec.replicas) {
      warnings.add(spec.replicas + " replicas but GPUs for only " + slots + " pod(s) of " + tensor
          + " are free on matching nodes now; the rest stay Pending until GPUs free up");
    }
    AllreduceChoice allreduce = AllreduceChooser.choose(spec.allreduce, tensor, rep.topology(), blocker, settings);
    var s = rep.topology().summary;
    PlacementDecision placement = new PlacementDecision(
        chosen.free().stream().map(v -> v.node().name()).toList(), chosen.labels(), tensor,
        spec.placement.nodeSelector, s.product, tensor > 1 ? s.interconnect.name() : "NotApplicable",
        tensor > 1 ? s.p2p.name() : "NotApplicable", chosen.minGpuMemory(),
        rep.topology().source == null ? null : rep.topology().source.name(), rep.topology());

    Double fraction = spec.memory.isAuto() ? null : Double.valueOf(spec.memory.fraction);
    MemoryPlanner.Result memory = MemoryPlanner.plan(spec, tensor, placement.gpuMemoryBytes(), allreduce, fraction);
    warnings.addAll(memory.plan().warnings());
    if (memory.doesNotFit() != null) {
      return new Plan(Outcome.DOES_NOT_FIT, memory.doesNotFit(), placement, allreduce, memory.plan(), warnings);
    }
    return new Plan(Outcome.OK, "placed on " + placement.nodes().size() + " node(s) of class " + placement.labels()
        + "; " + allreduce.reason(), placement, allreduce, memory.plan(), warnings);
  }

  /** What auto would pick for this spec on the plan's hardware (remediation lowers from it). */
  public static double autoFraction(InferenceDeploymentSpec effective, Plan plan) {
    InferenceDeploymentSpec spec = SpecValidator.withDefaults(effective);
    return MemoryPlanner.plan(spec, spec.parallelism.tensor, plan.placement().gpuMemoryBytes(), plan.allreduce(), null)
        .autoFraction();
  }
}
