package io.tensorlane.operator.plan;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

/**
 * Per-call inputs of the planner (the measurement age comes from {@code tensorlane.measurement-max-age}).
 *
 * @param now the planning time (measurement age is judged against it)
 * @param measurementMaxAge a preflight measurement older than this is ignored (its table and its failure);
 *     {@code null} means measurements never expire
 * @param currentNodes nodes the deployment's pods run on now: their class is kept while the spec still fits there,
 *     so a running deployment does not move when a better-fitting class frees up (empty for a new deployment)
 * @param engineCheck the spec checks of the spec's engine ({@code EngineProfiles::problem}), part of validation
 */
public record PlannerSettings(
        Instant now, Duration measurementMaxAge, Set<String> currentNodes, EngineCheck engineCheck) {

    public PlannerSettings {
        currentNodes = currentNodes == null ? Set.of() : Set.copyOf(currentNodes);
        Objects.requireNonNull(engineCheck, "engineCheck");
    }

    public PlannerSettings(Instant now, Duration measurementMaxAge, EngineCheck engineCheck) {
        this(now, measurementMaxAge, Set.of(), engineCheck);
    }

    /** The same settings for a deployment whose pods run on {@code nodes}. */
    public PlannerSettings withCurrentNodes(Set<String> nodes) {
        return new PlannerSettings(now, measurementMaxAge, nodes, engineCheck);
    }
}
