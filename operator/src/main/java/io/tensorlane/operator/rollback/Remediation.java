package io.tensorlane.operator.rollback;

import io.tensorlane.api.v1alpha1.AllreduceSpec.AllreduceMode;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.contract.Allreduce;
import io.tensorlane.operator.engine.EngineProfile;
import io.tensorlane.operator.engine.EngineProfiles;
import io.tensorlane.operator.plan.SpecValidator;
import io.tensorlane.operator.plan.Units;
import java.util.List;
import java.util.Optional;

/**
 * Remediation steps ({@link Action}, as recorded in {@code status.rollback.history}), one per attempt, in the order of
 * the engine's profile ({@link EngineProfile#remediations()}; at most: lower the memory fraction, shrink the allreduce
 * buffer, fall back to NCCL); each at most once per generation, after which only the fraction keeps being lowered.
 */
public final class Remediation {
    /** Memory fraction step. */
    public static final double FRACTION_STEP = 0.05;
    /** The fraction is never lowered below this. */
    public static final double MIN_FRACTION = 0.10;
    /** The allreduce buffer is never shrunk below this. */
    public static final long MIN_MESSAGE_BYTES = Units.MiB;

    /** A step: its action, what changed, and the new effective spec. */
    public record Step(Action action, String change, InferenceDeploymentSpec spec) {}

    private Remediation() {}

    /**
     * The next step for the failed effective spec, or empty when none is left.
     *
     * @param done actions already taken in this generation
     * @param plannedFraction the static fraction the failed spec ran with (what "auto" meant)
     * @param plannedAllreduce the allreduce it ran with (buffer steps apply only to Custom)
     */
    public static Optional<Step> next(
            InferenceDeploymentSpec failed, List<Action> done, double plannedFraction, Allreduce plannedAllreduce) {
        for (Action action : EngineProfiles.of(failed).remediations()) {
            if (!done.contains(action)) {
                Optional<Step> s = apply(action, failed, plannedFraction, plannedAllreduce);
                if (s.isPresent()) {
                    return s;
                }
            }
        }
        return apply(Action.LowerMemoryFraction, failed, plannedFraction, plannedAllreduce);
    }

    static Optional<Step> apply(
            Action action, InferenceDeploymentSpec failed, double plannedFraction, Allreduce plannedAllreduce) {
        InferenceDeploymentSpec s = SpecValidator.withDefaults(failed);
        boolean custom = plannedAllreduce == Allreduce.Custom
                && s.allreduce.mode != AllreduceMode.NCCL
                && s.parallelism.tensor > 1;
        switch (action) {
            case LowerMemoryFraction -> {
                double current = s.memory.isAuto() ? plannedFraction : Double.parseDouble(s.memory.fraction);
                double lowered = Math.round((current - FRACTION_STEP) * 100) / 100.0;
                if (lowered < MIN_FRACTION) {
                    return Optional.empty();
                }
                String from = s.memory.isAuto() ? "auto (" + Units.fraction(current) + ")" : Units.fraction(current);
                s.memory.fraction = Units.fraction(lowered);
                return Optional.of(new Step(action, "memory.fraction " + from + " -> " + s.memory.fraction, s));
            }
            case ShrinkAllreduceBuffer -> {
                long max = s.allreduce.maxMessageBytes;
                if (!custom || max <= MIN_MESSAGE_BYTES) {
                    return Optional.empty();
                }
                s.allreduce.maxMessageBytes = Math.max(MIN_MESSAGE_BYTES, max / 2);
                return Optional.of(
                        new Step(action, "allreduce.maxMessageBytes " + max + " -> " + s.allreduce.maxMessageBytes, s));
            }
            case FallBackToNccl -> {
                if (!custom) {
                    return Optional.empty();
                }
                AllreduceMode from = s.allreduce.mode;
                s.allreduce.mode = AllreduceMode.NCCL;
                return Optional.of(new Step(action, "allreduce.mode " + from + " -> NCCL", s));
            }
            default -> throw new IllegalArgumentException("unknown remediation action " + action);
        }
    }
}
