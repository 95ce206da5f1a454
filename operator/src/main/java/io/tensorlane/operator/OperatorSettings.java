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
 */
public record OperatorSettings(Duration topologyMaxAge, Duration requeueWhileRollingOut, Duration measurementMaxAge,
    String fieldManager) {

  public static final String FIELD_MANAGER = "tensorlane-operator";

  public static OperatorSettings defaults() {
    return new OperatorSettings(Duration.ofDays(7), Duration.ofSeconds(10), Duration.ofDays(7), FIELD_MANAGER);
  }

  public OperatorSettings withRequeue(Duration requeue) {
    return new OperatorSettings(topologyMaxAge, requeue, measurementMaxAge, fieldManager);
  }

  public OperatorSettings withTopologyMaxAge(Duration age) {
    return new OperatorSettings(age, requeueWhileRollingOut, measurementMaxAge, fieldManager);
  }
}
