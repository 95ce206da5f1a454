package io.tensorlane.operator;

import java.time.Duration;

/**
 * Operator-level knobs, as a plain record so tests and the benchmark build it without Quarkus; the Quarkus
 * application fills it from {@code tensorlane.*} configuration ({@link TensorlaneConfig}).
 *
 * @param topologyMaxAge a probe GpuTopology older than this gets the condition Stale and is not trusted for forcing
 *     the custom allreduce
 * @param requeueWhileRollingOut how soon to look again while pods roll out or a stability window runs
 * @param measurementMaxAge preflight measurements older than this are ignored by the planner
 * @param fieldManager server-side-apply field manager of every write
 * @param heuristicGrace how long a new GPU node may go without a probe GpuTopology before the labeller derives a
 *     heuristic one from its GFD labels (the probe DaemonSet needs a moment to publish)
 * @param preflightGate hold the first rollout of a custom-allreduce deployment until its nodes have a recent preflight
 *     measurement (the PreflightReconciler runs the Job); off only where no preflight can run
 * @param rollbackBackoff base of the backoff between rollback/remediation attempts (doubles per attempt)
 */
public record OperatorSettings(Duration topologyMaxAge, Duration requeueWhileRollingOut, Duration measurementMaxAge,
    String fieldManager, Duration heuristicGrace, boolean preflightGate, Duration rollbackBackoff) {

  public static final String FIELD_MANAGER = "tensorlane-operator";

  public static OperatorSettings defaults() {
    return new OperatorSettings(Duration.ofDays(7), Duration.ofSeconds(10), Duration.ofDays(7), FIELD_MANAGER,
        Duration.ofMinutes(2), true, Duration.ofSeconds(10));
  }

  public OperatorSettings withRequeue(Duration requeue) {
    return new OperatorSettings(topologyMaxAge, requeue, measurementMaxAge, fieldManager, heuristicGrace, preflightGate, rollbackBackoff);
  }

  public OperatorSettings withTopologyMaxAge(Duration age) {
    return new OperatorSettings(age, requeueWhileRollingOut, measurementMaxAge, fieldManager, heuristicGrace, preflightGate, rollbackBackoff);
  }

  public OperatorSettings withPreflightGate(boolean gate) {
    return new OperatorSettings(topologyMaxAge, requeueWhileRollingOut, measurementMaxAge, fieldManager, heuristicGrace,
        gate, rollbackBackoff);
  }

  public OperatorSettings withRollbackBackoff(Duration base) {
    return new OperatorSettings(topologyMaxAge, requeueWhileRollingOut, measurementMaxAge, fieldManager, heuristicGrace,
        preflightGate, base);
  }

  public OperatorSettings withHeuristicGrace(Duration grace) {
    return new OperatorSettings(topologyMaxAge, requeueWhileRollingOut, measurementMaxAge, fieldManager, grace, preflightGate, rollbackBackoff);
  }
}
