package io.tensorlane.operator.plan;

import java.time.Duration;
import java.time.Instant;

/**
 * Operator-level knobs of the planner.
 *
 * @param now the planning time (measurement age is judged against it)
 * @param measurementMaxAge a preflight measurement older than this is ignored (its table and its failure);
 *     {@code null} means measurements never expire
 */
public record PlannerSettings(Instant now, Duration measurementMaxAge) {

  /** Defaults: measurements are trusted for 7 days. */
  public static PlannerSettings defaults(Instant now) {
    return new PlannerSettings(now, Duration.ofDays(7));
  }
}
