package io.tensorlane.operator.engine;

import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import java.util.Arrays;
import java.util.List;

/**
 * The registry: one {@link EngineProfile} per value of the CRD's {@code spec.engine.type}. The switch has no default,
 * so a new CRD value does not compile until it has a profile here.
 */
public final class EngineProfiles {
    private static final EngineProfile TENSORLANE = new TensorlaneProfile();
    private static final EngineProfile SGLANG = new SglangProfile();
    private static final EngineProfile VLLM = new VllmProfile();

    private EngineProfiles() {}

    /** The profile of {@code type}. */
    public static EngineProfile of(EngineType type) {
        return switch (type) {
            case Tensorlane -> TENSORLANE;
            case SGLang -> SGLANG;
            case VLLM -> VLLM;
        };
    }

    /** The profile of a spec's engine; the schema default ({@link EngineSpec#type}) when the spec does not say. */
    public static EngineProfile of(InferenceDeploymentSpec spec) {
        EngineType type = spec == null || spec.engine == null || spec.engine.type == null
                ? new EngineSpec().type
                : spec.engine.type;
        return of(type);
    }

    /**
     * The engine container's image: {@code spec.engine.image} when the spec gives one, else the engine's default
     * ({@link EngineProfile#defaultImage}: the operator's runtime image for Tensorlane; null for an engine whose image the
     * spec must give, which the validator has already refused).
     */
    public static String image(InferenceDeploymentSpec spec, String runtimeImage) {
        String given = spec == null || spec.engine == null ? null : spec.engine.image;
        return given != null && !given.isBlank() ? given : of(spec).defaultImage(runtimeImage);
    }

    /**
     * The preflight Job's image: the engine's image when the preflight measures that engine (a custom build of the
     * runtime given as {@code spec.engine.image} runs its own kernels), the runtime image otherwise.
     */
    public static String preflightImage(InferenceDeploymentSpec spec, String runtimeImage) {
        return of(spec).preflight() ? image(spec, runtimeImage) : runtimeImage;
    }

    /**
     * The spec's engine's own problem with it ({@link EngineProfile#validate}), or null: the planner's {@code
     * EngineCheck}, handed to it in {@code PlannerSettings}.
     */
    public static String problem(InferenceDeploymentSpec spec) {
        return of(spec).validate(spec);
    }

    /** Every profile, in the CRD enum's order. */
    public static List<EngineProfile> all() {
        return Arrays.stream(EngineType.values()).map(EngineProfiles::of).toList();
    }
}
