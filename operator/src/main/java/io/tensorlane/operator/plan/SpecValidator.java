package io.tensorlane.operator.plan;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.AllreduceSpec;
import io.tensorlane.api.v1alpha1.EngineSpec;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.MemorySpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.PlacementSpec;
import io.tensorlane.api.v1alpha1.RolloutSpec;
import io.tensorlane.api.v1alpha1.ServingSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * What the schema cannot say (or what an object written before a schema change may lack), checked before planning;
 * and the schema defaults, applied to a copy for specs built in code.
 */
public final class SpecValidator {
    private SpecValidator() {}

    /**
     * The first problem as a message for the InvalidSpec condition, or null when the spec can be planned.
     *
     * @param engine the checks of the spec's engine, made after the general ones on the model, parallelism, geometry
     *     and replicas and before those on the image, env, memory, serving, allreduce, placement and rollout
     */
    public static String validate(InferenceDeploymentSpec spec, EngineCheck engine) {
        if (spec == null) {
            return "spec is missing";
        }
        ModelSpec m = spec.model;
        if (m == null) {
            return "spec.model is required";
        }
        if (m.name == null || m.name.isBlank()) {
            return "spec.model.name is required";
        }
        if (m.weightBytes == null || m.weightBytes < 1) {
            return "spec.model.weightBytes is required and must be > 0";
        }
        if (spec.parallelism == null || spec.parallelism.tensor == null) {
            return "spec.parallelism.tensor is required";
        }
        int tp = spec.parallelism.tensor;
        if (tp < 1 || tp > 8) {
            return "spec.parallelism.tensor must be 1..8, got " + tp;
        }
        List<String> geometry = GeometryCheck.problems(m.geometry, tp, "spec.model.geometry");
        if (!geometry.isEmpty()) {
            return String.join("; ", geometry);
        }
        if (spec.replicas != null && spec.replicas < 0) {
            return "spec.replicas must be >= 0, got " + spec.replicas;
        }
        String engineProblem = engine.problem(spec);
        if (engineProblem != null) {
            return engineProblem;
        }
        EngineSpec e = spec.engine;
        if (e != null && e.image != null && !e.image.isBlank() && !ImageReference.valid(e.image)) {
            return "spec.engine.image '" + e.image
                    + "' is not an image reference ([registry[:port]/]path[:tag][@digest], "
                    + "no spaces, lower-case path)";
        }
        if (e != null && e.env != null) {
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (var v : e.env) {
                if (v != null && v.getName() != null && !seen.add(v.getName())) {
                    return "spec.engine.env sets " + v.getName() + " more than once";
                }
            }
        }
        if (spec.memory != null && !spec.memory.isAuto()) {
            String f = spec.memory.fraction;
            double v;
            try {
                v = Double.parseDouble(f);
            } catch (NumberFormatException ex) {
                v = Double.NaN;
            }
            if (!(v > 0 && v < 1)) {
                return "spec.memory.fraction must be 'auto' or a number in (0, 1), got '" + f + "'";
            }
        }
        if (spec.memory != null && spec.memory.reserveMiB != null && spec.memory.reserveMiB < 0) {
            return "spec.memory.reserveMiB must be >= 0";
        }
        ServingSpec s = spec.serving;
        if (s != null
                && (s.maxModelLength != null && s.maxModelLength < 16
                        || s.maxBatchTokens != null && s.maxBatchTokens < 16)) {
            return "spec.serving.maxModelLength and maxBatchTokens must be >= 16";
        }
        String speculative = Speculation.problem(spec);
        if (speculative != null) {
            return speculative;
        }
        AllreduceSpec a = spec.allreduce;
        if (a != null && a.maxMessageBytes != null && (a.maxMessageBytes < 4096 || a.maxMessageBytes > (1L << 30))) {
            return "spec.allreduce.maxMessageBytes must be 4096..1073741824, got " + a.maxMessageBytes;
        }
        if (spec.placement != null && spec.placement.nodeSelector != null) {
            for (var label : spec.placement.nodeSelector.entrySet()) {
                String bad = LabelSyntax.keyProblem(label.getKey());
                bad = bad != null ? bad : LabelSyntax.valueProblem(label.getValue());
                if (bad != null) {
                    return "spec.placement.nodeSelector " + label.getKey() + "=" + label.getValue() + ": " + bad;
                }
            }
        }
        if (spec.rollout != null && spec.rollout.maxUnavailable != null && spec.rollout.maxUnavailable < 0) {
            return "spec.rollout.maxUnavailable must be >= 0";
        }
        return null;
    }

    /** A deep copy with every schema default filled in where the field is null. */
    public static InferenceDeploymentSpec withDefaults(InferenceDeploymentSpec in) {
        InferenceDeploymentSpec s = Serialization.unmarshal(Serialization.asJson(in), InferenceDeploymentSpec.class);
        if (s.model.dtype == null) {
            s.model.dtype = ModelSpec.DType.bf16;
        }
        if (s.engine == null) {
            s.engine = new EngineSpec();
        }
        if (s.engine.type == null) {
            s.engine.type = EngineSpec.EngineType.Tensorlane;
        }
        s.engine.args = s.engine.args == null ? new ArrayList<>() : s.engine.args;
        s.engine.env = s.engine.env == null ? new ArrayList<>() : s.engine.env;
        if (s.replicas == null) {
            s.replicas = 1;
        }
        ServingSpec dServing = new ServingSpec();
        if (s.serving == null) {
            s.serving = dServing;
        }
        s.serving.maxModelLength = or(s.serving.maxModelLength, dServing.maxModelLength);
        s.serving.maxBatchTokens = or(s.serving.maxBatchTokens, dServing.maxBatchTokens);
        s.serving.port = or(s.serving.port, dServing.port);
        s.serving.kvCacheDtype = or(s.serving.kvCacheDtype, dServing.kvCacheDtype);
        if (s.serving.speculative != null) {
            SpeculativeSpec dSpec = new SpeculativeSpec();
            s.serving.speculative.numSpeculativeTokens =
                    or(s.serving.speculative.numSpeculativeTokens, dSpec.numSpeculativeTokens);
            s.serving.speculative.promptLookupMax = or(s.serving.speculative.promptLookupMax, dSpec.promptLookupMax);
        }
        if (s.placement == null) {
            s.placement = new PlacementSpec();
        }
        s.placement.interconnect = or(s.placement.interconnect, PlacementSpec.InterconnectRequirement.Any);
        s.placement.nodeSelector = s.placement.nodeSelector == null ? new LinkedHashMap<>() : s.placement.nodeSelector;
        s.placement.tolerations = s.placement.tolerations == null ? new ArrayList<>() : s.placement.tolerations;
        AllreduceSpec dAr = new AllreduceSpec();
        if (s.allreduce == null) {
            s.allreduce = dAr;
        }
        s.allreduce.mode = or(s.allreduce.mode, dAr.mode);
        s.allreduce.algorithm = or(s.allreduce.algorithm, dAr.algorithm);
        s.allreduce.maxMessageBytes = or(s.allreduce.maxMessageBytes, dAr.maxMessageBytes);
        MemorySpec dMem = new MemorySpec();
        if (s.memory == null) {
            s.memory = dMem;
        }
        s.memory.fraction = or(s.memory.fraction, dMem.fraction);
        s.memory.reserveMiB = or(s.memory.reserveMiB, dMem.reserveMiB);
        RolloutSpec dRo = new RolloutSpec();
        if (s.rollout == null) {
            s.rollout = dRo;
        }
        s.rollout.maxUnavailable = or(s.rollout.maxUnavailable, dRo.maxUnavailable);
        s.rollout.progressDeadlineSeconds = or(s.rollout.progressDeadlineSeconds, dRo.progressDeadlineSeconds);
        s.rollout.stabilityWindowSeconds = or(s.rollout.stabilityWindowSeconds, dRo.stabilityWindowSeconds);
        RolloutSpec.AutoRollbackSpec dAuto = new RolloutSpec.AutoRollbackSpec();
        if (s.rollout.autoRollback == null) {
            s.rollout.autoRollback = dAuto;
        }
        RolloutSpec.AutoRollbackSpec a = s.rollout.autoRollback;
        a.enabled = or(a.enabled, dAuto.enabled);
        a.maxAttempts = or(a.maxAttempts, dAuto.maxAttempts);
        a.remediate = or(a.remediate, dAuto.remediate);
        a.onCrashLoop = or(a.onCrashLoop, dAuto.onCrashLoop);
        a.onProgressDeadline = or(a.onProgressDeadline, dAuto.onProgressDeadline);
        return s;
    }

    private static <T> T or(T v, T dflt) {
        return v != null ? v : dflt;
    }
}
