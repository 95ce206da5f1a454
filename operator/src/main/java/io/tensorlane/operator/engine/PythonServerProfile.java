package io.tensorlane.operator.engine;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import java.util.List;

/**
 * What the PyTorch-based servers (SGLang, vLLM) share: {@code /health} for readiness and liveness, PyTorch's CUDA OOM
 * lines, no preflight (they run their own kernels), an image the spec must name, and no
 * {@link Action#ShrinkAllreduceBuffer} step (they size their own allreduce buffers and are not given
 * {@code allreduce.maxMessageBytes}, so that step would re-apply the same pod). Subclasses give the command line and
 * the meaning of the memory fraction.
 */
abstract class PythonServerProfile implements EngineProfile {
    @Override
    public final String readyPath() {
        return "/health";
    }

    @Override
    public final String livePath() {
        return "/health";
    }

    @Override
    public final List<String> oomLogMarkers() {
        return PYTORCH_OOM_MARKERS;
    }

    @Override
    public final boolean preflight() {
        return false;
    }

    /** None: the spec names the image (see {@link #validate}). */
    @Override
    public final String defaultImage(String runtimeImage) {
        return null;
    }

    @Override
    public final String validate(InferenceDeploymentSpec spec) {
        return EngineProfile.requireImage(spec);
    }

    @Override
    public final List<Action> remediations() {
        return List.of(Action.LowerMemoryFraction, Action.FallBackToNccl);
    }
}
