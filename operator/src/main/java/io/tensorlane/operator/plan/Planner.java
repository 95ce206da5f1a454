package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
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
    throw new UnsupportedOperationException("in progress");
  }
}
