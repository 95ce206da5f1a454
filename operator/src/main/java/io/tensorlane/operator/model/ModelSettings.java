package io.tensorlane.operator.model;

import java.time.Duration;

/**
 * Inspection knobs ({@code tensorlane.model.*}).
 *
 * @param requestTimeout per Hub request (connect and answer)
 * @param branchTtl how long a result for a branch or tag (not a commit) is reused for new deployments
 * @param failureTtl how long a failed read is remembered before the next deployment reconcile reads again
 * @param threads inspection threads (reads run there, never on a reconcile thread)
 */
public record ModelSettings(Duration requestTimeout, Duration branchTtl, Duration failureTtl, int threads) {
  /** How soon a deployment whose model is being read is looked at again. */
  public static final Duration PENDING_RECHECK = Duration.ofSeconds(1);
  /** How soon a deployment whose model could not be read is looked at again (a fixed Secret, a model made public). */
  public static final Duration FAILED_RECHECK = Duration.ofSeconds(60);

  public static ModelSettings defaults() {
    return new ModelSettings(Duration.ofSeconds(10), Duration.ofMinutes(10), Duration.ofSeconds(30), 4);
  }
}
