package io.tensorlane.operator.engine;

import static io.tensorlane.operator.engine.EngineProfile.env;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Units;
import java.util.ArrayList;
import java.util.List;

/**
 * SGLang ({@code python3 -m sglang.launch_server}): the static fraction as {@code --mem-fraction-static}, an FP8 KV
 * cache as {@code --kv-cache-dtype fp8_e4m3} (its choices: auto, fp8_e4m3, fp8_e5m2, bf16/bfloat16; any other plan
 * keeps its default auto, the model's activation dtype, which is what the plan sized), its own custom allreduce
 * switched off when the plan says NCCL, PyTorch's OOM lines, no preflight (it runs its own kernels), an image is
 * required.
 */
public final class SglangProfile extends PythonServerProfile {
    @Override
    public EngineType type() {
        return EngineType.SGLang;
    }

    @Override
    public Launch launch(InferenceDeploymentSpec spec, Plan plan, ModelLocation model) {
        int tp = spec.parallelism.tensor;
        List<String> args = new ArrayList<>(List.of(
                "--model-path",
                model.dir(),
                "--served-model-name",
                spec.model.name,
                "--host",
                "0.0.0.0",
                "--port",
                Integer.toString(spec.serving.port),
                "--tp",
                Integer.toString(tp),
                "--mem-fraction-static",
                Units.fraction(memoryFraction(plan.memory())),
                "--context-length",
                Integer.toString(spec.serving.maxModelLength),
                "--chunked-prefill-size",
                Integer.toString(spec.serving.maxBatchTokens)));
        if (plan.memory().kvCacheDtype() == DType.fp8) {
            args.addAll(List.of("--kv-cache-dtype", "fp8_e4m3"));
        }
        if (tp > 1 && !plan.allreduce().custom()) {
            args.add("--disable-custom-all-reduce");
        }
        return new Launch(List.of("python3", "-m", "sglang.launch_server"), args, List.of(env("HOME", "/tmp")));
    }

    /** {@code mem_fraction_static}: weights + KV cache over total memory. */
    @Override
    public double memoryFraction(MemoryPlan plan) {
        return plan.staticFraction();
    }
}
