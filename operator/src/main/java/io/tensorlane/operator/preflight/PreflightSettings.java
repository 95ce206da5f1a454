package io.tensorlane.operator.preflight;

import java.time.Duration;

/**
 * Knobs of the preflight Job (plain record: tests build it directly; the Quarkus application fills it from
 * {@code tensorlane.preflight.*}, see {@link PreflightConfig}).
 *
 * @param runtimeImage image of the Tensorlane runtime (used unless {@code spec.engine.image} is set)
 * @param deadline the Job's {@code activeDeadlineSeconds}: the preflight can never run longer than this
 * @param grace extra time after the deadline before the operator gives up on a Job the Job controller has not failed
 *     (belt and braces: the preflight never hangs the rollout even if the deadline is not enforced)
 * @param ttlAfterFinished the Job's {@code ttlSecondsAfterFinished}
 * @param recheck how soon to look again while a Job runs
 * @param measurementMaxAge a measurement older than this is not recent (the planner ignores it too)
 * @param benchMaxBytes largest message size of the short bench (bytes per rank)
 * @param runAsUser non-root UID/GID of the preflight container
 */
public record PreflightSettings(String runtimeImage, Duration deadline, Duration grace, Duration ttlAfterFinished,
    Duration recheck, Duration measurementMaxAge, long benchMaxBytes, long runAsUser) {

  public static final Duration DEFAULT_DEADLINE = Duration.ofMinutes(5);

  public PreflightSettings {
    if (runtimeImage == null || runtimeImage.isBlank()) {
      throw new IllegalArgumentException("preflight: runtime image must be set");
    }
    if (deadline == null || deadline.toSeconds() < 1) {
      throw new IllegalArgumentException("preflight: deadline must be at least 1 s, got " + deadline);
    }
    if (benchMaxBytes < 1024) {
      throw new IllegalArgumentException("preflight: benchMaxBytes must be at least 1024, got " + benchMaxBytes);
    }
  }

  /** Production defaults: 5 min deadline, 30 s grace, 1 h TTL, recheck every 5 s, 7 d measurements, bench to 8 MiB. */
  public static PreflightSettings defaults(String runtimeImage) {
    return new PreflightSettings(runtimeImage, DEFAULT_DEADLINE, Duration.ofSeconds(30), Duration.ofHours(1),
        Duration.ofSeconds(5), Duration.ofDays(7), 8L << 20, 1000L);
  }

  public PreflightSettings withDeadline(Duration d, Duration g) {
    return new PreflightSettings(runtimeImage, d, g, ttlAfterFinished, recheck, measurementMaxAge, benchMaxBytes,
        runAsUser);
  }

  public PreflightSettings withRecheck(Duration r) {
    return new PreflightSettings(runtimeImage, deadline, grace, ttlAfterFinished, r, measurementMaxAge, benchMaxBytes,
        runAsUser);
  }
}
