package io.tensorlane.operator.engine;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.operator.plan.Speculation;
import java.util.List;

/**
 * What the PyTorch-based servers (SGLang, vLLM) share: {@code /health} for readiness and liveness, PyTorch's CUDA OOM
 * lines, no preflight (they run their own kernels), an image the spec must name, and no
 * {@link Action#ShrinkAllreduceBuffer} step (they size their own allreduce buffers and are not given
 * {@code allreduce.maxMessageBytes}, so that step would re-apply the same pod). Subclasses give the command line, the
 * meaning of the memory fraction and the probe timeout. Every flag and variable they render is in the engine's
 * fixture of upstream names ({@code operator/src/test/resources/engine-flags/}).
 */
abstract class PythonServerProfile implements EngineProfile {
    /**
     * The {@code --dtype} value (the same choices in SGLang and vLLM: auto, half, float16, bfloat16, float, float32) of
     * the model's dtype; null for fp8, whose checkpoint's quantization config sets the activation dtype (the engine's
     * auto).
     */
    static String torchDtype(DType dtype) {
        if (dtype == null) {
            return null;
        }
        return switch (dtype) {
            case bf16 -> "bfloat16";
            case fp16 -> "float16";
            case fp32 -> "float32";
            case fp8 -> null;
        };
    }

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
        String image = EngineProfile.requireImage(spec);
        return image != null ? image : batchLimit(spec);
    }

    /**
     * spec.serving.speculative.disableByBatchSize refused: neither Python engine, at the commits the flags are pinned to
     * (engine-flags/vllm.json, sglang.json), has a setting that stops speculation by batch size. vLLM's
     * SpeculativeConfig (vllm/config/speculative.py, commit 002e77c1) has no disable_by_batch_size (older vLLM had it);
     * SGLang's speculative arguments (python/sglang/srt/server_args.py) have none. Not passing it would speculate at
     * every batch size, the opposite of what it asks; the field has no default, so only a spec that sets it is refused.
     */
    static String batchLimit(InferenceDeploymentSpec spec) {
        SpeculativeSpec s = Speculation.of(spec);
        return s == null || s.disableByBatchSize == null
                ? null
                : "spec.serving.speculative." + SpeculativeSpec.BATCH_LIMIT_TENSORLANE_ONLY;
    }

    @Override
    public final List<Action> remediations() {
        return List.of(Action.LowerMemoryFraction, Action.FallBackToNccl);
    }
}
