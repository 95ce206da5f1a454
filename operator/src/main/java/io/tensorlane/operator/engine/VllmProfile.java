package io.tensorlane.operator.engine;

import static io.tensorlane.operator.engine.EngineProfile.env;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Units;
import io.tensorlane.operator.rollback.Remediation;
import java.util.ArrayList;
import java.util.List;

/**
 * vLLM ({@code vllm serve}): the model directory as the first argument, {@code --gpu-memory-utilization} (which
 * covers everything vLLM allocates, not only weights + KV cache), its own custom allreduce switched off when the plan
 * says NCCL, PyTorch's OOM lines, no preflight, an image is required.
 */
public final class VllmProfile implements EngineProfile {
  @Override
  public EngineType type() {
    return EngineType.VLLM;
  }

  @Override
  public Launch launch(InferenceDeploymentSpec spec, Plan plan, ModelLocation model) {
    int tp = spec.parallelism.tensor;
    List<String> args = new ArrayList<>(List.of(model.dir(), "--served-model-name", spec.model.name,
        "--host", "0.0.0.0", "--port", Integer.toString(spec.serving.port), "--tensor-parallel-size",
        Integer.toString(tp), "--gpu-memory-utilization", Units.fraction(memoryFraction(plan.memory())),
        "--max-model-len", Integer.toString(spec.serving.maxModelLength),
        "--max-num-batched-tokens", Integer.toString(spec.serving.maxBatchTokens)));
    if (tp > 1 && !plan.allreduce().custom()) {
      args.add("--disable-custom-all-reduce");
    }
    return new Launch(List.of("vllm", "serve"), args, List.of(env("HOME", "/tmp")));
  }

  /** {@code gpu_memory_utilization}: static + non-static − the user's reserve, over total memory. */
  @Override
  public double memoryFraction(MemoryPlan plan) {
    return plan.gpuMemoryUtilization();
  }

  @Override
  public String readyPath() {
    return "/health";
  }

  @Override
  public String livePath() {
    return "/health";
  }

  @Override
  public List<String> oomLogMarkers() {
    return PYTORCH_OOM_MARKERS;
  }

  @Override
  public boolean preflight() {
    return false;
  }

  /** None: the spec names the image (see {@link #validate}). */
  @Override
  public String defaultImage(String runtimeImage) {
    return null;
  }

  @Override
  public String validate(InferenceDeploymentSpec spec) {
    return EngineProfile.requireImage(spec);
  }

  /**
   * Not {@link Remediation#SHRINK_ALLREDUCE_BUFFER}: vLLM sizes its own allreduce buffers and is not given
   * {@code allreduce.maxMessageBytes}, so that step would re-apply the same pod.
   */
  @Override
  public List<String> remediations() {
    return List.of(Remediation.LOWER_MEMORY_FRACTION, Remediation.FALL_BACK_TO_NCCL);
  }
}
