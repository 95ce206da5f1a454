package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;

/**
 * The part of spec validation that only the spec's engine knows ({@code EngineProfile#validate}, e.g. an image the
 * spec must name). The planner is handed it ({@link PlannerSettings#engineCheck}) rather than looking the engine up:
 * the engine profiles render plans, so {@code io.tensorlane.operator.engine} depends on this package, not the reverse.
 */
@FunctionalInterface
public interface EngineCheck {
    /** A problem with {@code spec.engine} as an InvalidSpec message, or null when there is none. */
    String problem(InferenceDeploymentSpec spec);
}
