package io.tensorlane.operator.model;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelGeometry;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.ModelStatus;
import io.tensorlane.api.v1alpha1.ServingSpec;
import io.tensorlane.api.v1alpha1.ServingSpec.KvCacheDtype;
import io.tensorlane.modelfacts.ModelDtype;
import io.tensorlane.modelfacts.ModelSource;
import io.tensorlane.operator.plan.Outcome;
import io.tensorlane.operator.plan.Plan;
import java.util.List;

/**
 * What is known about the model of an effective spec before planning. Pure data plus the pure rule that fills the
 * spec: a spec override wins, the facts read from the source fill what the spec leaves out.
 *
 * @param source the parsed source (null when it cannot be parsed)
 * @param status status.model: the facts read from the source (null when none are read for this source kind, or not yet)
 * @param state where inspection stands
 * @param reason condition reason when FAILED (ModelNotFound, Unauthorized, UnsupportedArchitecture, InvalidModel,
 *     SecretNotFound, SecretUnreadable, ImageVolumeUnsupported, InspectionFailed, InvalidSource), InspectingModel when PENDING
 * @param message for a person: which model, which file or field, and why; never a token
 * @param draftStatus status.draftModel: the facts read of spec.serving.speculative.draftModel (null without a draft
 *     model, for a source that is not inspected, or not yet); the state, reason and message are the draft's when the
 *     target is ready and the draft is not ({@link #withDraft})
 */
public record ModelResolution(
        ModelSource source, ModelStatus status, State state, String reason, String message, ModelStatus draftStatus) {
    /** Where inspection stands. */
    public enum State {
        /** status holds the facts (hf:// read over the Hub API; pvc://, file://, oci:// read by the inspection Job). */
        KNOWN,
        /** Nothing to read: the spec carries geometry and weightBytes for a source the operator does not inspect. */
        NOT_NEEDED,
        /** Being read; the deployment is Progressing with reason InspectingModel. */
        PENDING,
        /** Cannot be read or served; condition ModelUnavailable with reason and message. */
        FAILED
    }

    public static final String REASON_INSPECTING = "InspectingModel";

    public static ModelResolution known(ModelSource source, ModelStatus status) {
        return new ModelResolution(source, status, State.KNOWN, null, null, null);
    }

    public static ModelResolution notNeeded(ModelSource source) {
        return new ModelResolution(source, null, State.NOT_NEEDED, null, null, null);
    }

    public static ModelResolution pending(ModelSource source, String message) {
        return new ModelResolution(source, null, State.PENDING, REASON_INSPECTING, message, null);
    }

    public static ModelResolution failed(ModelSource source, String reason, String message) {
        return new ModelResolution(source, null, State.FAILED, reason, message, null);
    }

    /**
     * The target's resolution with its draft model's ({@code draft}, null without one): the draft's facts as {@link
     * #draftStatus}; while the target is ready but the draft is not, the draft's state, reason and message (prefixed
     * with the field), so the deployment waits for (or reports) the draft as it does for the target.
     */
    public static ModelResolution withDraft(ModelResolution target, ModelResolution draft) {
        if (draft == null) {
            return target;
        }
        if (!target.ready() || draft.ready()) {
            return new ModelResolution(
                    target.source, target.status, target.state, target.reason, target.message, draft.status);
        }
        return new ModelResolution(
                target.source,
                target.status,
                draft.state,
                draft.reason,
                "spec.serving.speculative.draftModel: " + draft.message,
                draft.status);
    }

    /** The planner and renderer may proceed. */
    public boolean ready() {
        return state == State.KNOWN || state == State.NOT_NEEDED;
    }

    /** The plan while not ready: INSPECTING_MODEL or MODEL_UNAVAILABLE with the message; null when ready. */
    public Plan blockingPlan() {
        return switch (state) {
            case PENDING -> new Plan(Outcome.INSPECTING_MODEL, message, null, null, null, List.of());
            case FAILED -> new Plan(Outcome.MODEL_UNAVAILABLE, message, null, null, null, List.of());
            default -> null;
        };
    }

    /**
     * The spec the planner sees: a copy of {@code spec} whose model geometry, weightBytes and dtype come from the spec
     * where set (an override wins, whole geometry at a time) and from {@code status} otherwise (the dtype through
     * {@link ModelDtype}: fp8 for a checkpoint whose quantization_config says FP8; the planner's default bf16 only when
     * neither names one). For FP8 weights, {@code serving.kvCacheDtype: auto} becomes the activation dtype that only
     * config.json knows ({@link ModelDtype#activation}: fp16 when it says float16, else bf16); the planner resolves auto
     * from the dtype alone otherwise. The spec is not modified.
     */
    public static InferenceDeploymentSpec fill(InferenceDeploymentSpec spec, ModelStatus status) {
        return fill(spec, status, null);
    }

    /**
     * {@link #fill(InferenceDeploymentSpec, ModelStatus)}, and the draft model's geometry, weightBytes and dtype from
     * {@code draft} (status.draftModel) where spec.serving.speculative.draftModel leaves them out; the draft's KV dtype
     * is the planner's ({@code DraftPlan}). The spec is not modified.
     */
    public static InferenceDeploymentSpec fill(InferenceDeploymentSpec spec, ModelStatus status, ModelStatus draft) {
        InferenceDeploymentSpec out = fillTarget(spec, status);
        ModelSpec d = io.tensorlane.operator.plan.Speculation.draftModel(out);
        if (draft == null || d == null || d.geometry != null && d.weightBytes != null && d.dtype != null) {
            return out;
        }
        InferenceDeploymentSpec copy = out == spec ? io.fabric8.kubernetes.client.utils.Serialization.clone(spec) : out;
        ModelSpec m = copy.serving.speculative.draftModel;
        if (m.geometry == null && draft.geometry != null) {
            m.geometry = io.fabric8.kubernetes.client.utils.Serialization.clone(draft.geometry);
        }
        if (m.weightBytes == null) {
            m.weightBytes = draft.weightBytes;
        }
        if (m.dtype == null) {
            m.dtype = ModelDtype.of(draft).orElse(null);
        }
        return copy;
    }

    private static InferenceDeploymentSpec fillTarget(InferenceDeploymentSpec spec, ModelStatus status) {
        if (status == null
                || spec == null
                || spec.model == null
                || spec.model.geometry != null
                        && spec.model.weightBytes != null
                        && spec.model.dtype != null
                        && !kvFromConfig(spec, spec.model.dtype)) {
            return spec;
        }
        InferenceDeploymentSpec copy = io.fabric8.kubernetes.client.utils.Serialization.clone(spec);
        if (copy.model.geometry == null && status.geometry != null) {
            copy.model.geometry = io.fabric8.kubernetes.client.utils.Serialization.clone(status.geometry);
        }
        if (copy.model.weightBytes == null) {
            copy.model.weightBytes = status.weightBytes;
        }
        if (copy.model.dtype == null) {
            copy.model.dtype = ModelDtype.of(status).orElse(null);
        }
        if (kvFromConfig(copy, copy.model.dtype)) {
            copy.serving = copy.serving == null ? new ServingSpec() : copy.serving;
            copy.serving.kvCacheDtype = KvCacheDtype.valueOf(
                    ModelDtype.activation(DType.fp8, status.dtype).name());
        }
        return copy;
    }

    /** An auto KV cache of FP8 weights: its dtype is config.json's activation dtype. */
    private static boolean kvFromConfig(InferenceDeploymentSpec spec, DType weights) {
        KvCacheDtype kv = spec.serving == null ? null : spec.serving.kvCacheDtype;
        return weights == DType.fp8 && (kv == null || kv == KvCacheDtype.auto);
    }

    /** The spec for planning, with the facts filled in. */
    public InferenceDeploymentSpec fill(InferenceDeploymentSpec spec) {
        return fill(spec, status, draftStatus);
    }

    /** Geometry the plan will use (spec override or read), or null. */
    public static ModelGeometry geometryOf(InferenceDeploymentSpec spec, ModelStatus status) {
        InferenceDeploymentSpec f = fill(spec, status);
        return f == null || f.model == null ? null : f.model.geometry;
    }
}
