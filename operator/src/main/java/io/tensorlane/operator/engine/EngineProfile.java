package io.tensorlane.operator.engine;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarBuilder;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Plan;
import java.util.List;

/**
 * Everything that depends on the engine type ({@code spec.engine.type}): how its container is started, which of the
 * plan's memory figures it is given, what its OOM looks like in a log, whether the runtime's preflight measures it,
 * what the spec must say for it, its health paths and the remediation steps that change something for it. One class
 * per engine, found through {@link EngineProfiles}; everything else in the operator is engine-agnostic. Every method
 * is pure.
 */
public interface EngineProfile {
    /**
     * PyTorch's CUDA OOM lines (lower case), for engines built on it; a Java heap OOM ({@code
     * java.lang.OutOfMemoryError}) is never a CUDA OOM, whatever the markers.
     */
    List<String> PYTORCH_OOM_MARKERS = List.of(
            "cuda out of memory",
            "torch.outofmemoryerror",
            "torch.cuda.outofmemoryerror",
            "cuda error: out of memory",
            "outofmemoryerror");

    /** The CRD value this profile serves. */
    EngineType type();

    /**
     * Container command, arguments and environment for a planned spec, before the NCCL environment (first) and the
     * user's {@code spec.engine.args} / {@code env} (last), which the renderer adds for every engine.
     *
     * @param spec the effective spec with defaults and model facts filled in
     * @param plan an OK plan for it
     * @param model where the model is in the pod
     */
    Launch launch(InferenceDeploymentSpec spec, Plan plan, ModelLocation model);

    /**
     * The memory fraction this engine is started with: the planner computes both meanings ({@link
     * MemoryPlan#staticFraction()}, weights + KV cache over total, and {@link MemoryPlan#gpuMemoryUtilization()},
     * everything but the reserve over total); each engine takes the one its flag means.
     */
    double memoryFraction(MemoryPlan plan);

    /** HTTP path of the readiness and startup probes. */
    String readyPath();

    /** HTTP path of the liveness probe. */
    String livePath();

    /**
     * Seconds the readiness and liveness probes wait for an answer: longer than the engine's health endpoint may take
     * on a healthy server (SGLang's {@code /health} generates a token under its own 20 s timeout).
     */
    int probeTimeoutSeconds();

    /** HTTP path of the Prometheus metrics on the serving port (the pod's {@code prometheus.io/path}). */
    default String metricsPath() {
        return "/metrics";
    }

    /**
     * Lower-case substrings of a line in this engine's log (the termination message under FallbackToLogsOnError) that
     * mean CUDA out of memory. The runtime's JSON termination message is recognised for every engine (the model
     * download step runs the runtime image in every pod), so an engine that writes it needs no markers.
     */
    List<String> oomLogMarkers();

    /**
     * True when the runtime's preflight (P2P check, allreduce selftest, bench of Tensorlane's kernels) measures what
     * this engine runs: only then may a first rollout wait for it, and its Job runs this engine's image.
     */
    boolean preflight();

    /**
     * The image when {@code spec.engine.image} is empty, given the operator's runtime image ({@code
     * tensorlane.runtime-image}); null when the spec must name one ({@link #validate} says so).
     */
    String defaultImage(String runtimeImage);

    /** A problem with {@code spec.engine} that only this engine has, as an InvalidSpec message; null when none. */
    String validate(InferenceDeploymentSpec spec);

    /**
     * The remediation actions (carried out by {@code Remediation}) that change what this engine runs, in the order they
     * are tried; a step that leaves the rendered pod as it was would only re-apply the failing revision.
     */
    List<Action> remediations();

    /**
     * What the profile renders.
     *
     * @param command the container command, or null for the image's entrypoint
     */
    record Launch(List<String> command, List<String> args, List<EnvVar> env) {}

    /**
     * @param dir the directory the engine loads (TENSORLANE_MODEL_DIR, --model-path)
     * @param source the source URI the pod uses (hf:// pinned to the commit)
     * @param draftDir the draft model's directory (spec.serving.speculative.draftModel), or null without one
     */
    record ModelLocation(String dir, String source, String draftDir) {
        /** A location without a draft model. */
        public ModelLocation(String dir, String source) {
            this(dir, source, null);
        }
    }

    /** One environment variable with a plain value. */
    static EnvVar env(String name, String value) {
        return new EnvVarBuilder().withName(name).withValue(value).build();
    }

    /** The InvalidSpec message of an engine without a default image when {@code spec.engine.image} is empty. */
    static String requireImage(InferenceDeploymentSpec spec) {
        var e = spec.engine;
        return e != null && (e.image == null || e.image.isBlank())
                ? "spec.engine.image is required for engine " + e.type
                : null;
    }
}
