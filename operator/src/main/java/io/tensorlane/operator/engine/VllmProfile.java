package io.tensorlane.operator.engine;

import static io.tensorlane.operator.engine.EngineProfile.env;

import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Speculation;
import io.tensorlane.operator.plan.Units;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * vLLM ({@code vllm serve}): the model directory as the first argument, the model's dtype as {@code --dtype}, its
 * {@code /metrics} (served by default), {@code /health} (answers from the engine's state without generating, so the
 * usual 5 s probe timeout fits), {@code --gpu-memory-utilization} (which
 * covers everything vLLM allocates, not only weights + KV cache), an FP8 KV cache as {@code --kv-cache-dtype fp8}
 * (vLLM's CacheDType: fp8 = fp8_e4m3; any other plan keeps its default auto, the model's activation dtype, which is
 * what the plan sized), n-gram or draft-model speculation as {@code --speculative-config} JSON ({@link
 * #speculativeConfig}), its own
 * custom allreduce switched off when the plan says NCCL, PyTorch's OOM lines, no
 * preflight, an image is required.
 */
public final class VllmProfile extends PythonServerProfile {
    @Override
    public EngineType type() {
        return EngineType.VLLM;
    }

    @Override
    public Launch launch(InferenceDeploymentSpec spec, Plan plan, ModelLocation model) {
        int tp = spec.parallelism.tensor;
        List<String> args = new ArrayList<>(List.of(
                model.dir(),
                "--served-model-name",
                spec.model.name,
                "--host",
                "0.0.0.0",
                "--port",
                Integer.toString(spec.serving.port),
                "--tensor-parallel-size",
                Integer.toString(tp),
                "--gpu-memory-utilization",
                Units.fraction(memoryFraction(plan.memory())),
                "--max-model-len",
                Integer.toString(spec.serving.maxModelLength),
                "--max-num-batched-tokens",
                Integer.toString(spec.serving.maxBatchTokens)));
        String dtype = torchDtype(spec.model.dtype);
        if (dtype != null) {
            args.addAll(List.of("--dtype", dtype));
        }
        if (plan.memory().kvCacheDtype() == DType.fp8) {
            args.addAll(List.of("--kv-cache-dtype", "fp8"));
        }
        if (tp > 1 && !plan.allreduce().custom()) {
            args.add("--disable-custom-all-reduce");
        }
        String speculative = speculativeConfig(Speculation.of(spec), model.draftDir(), tp);
        if (speculative != null) {
            args.addAll(List.of("--speculative-config", speculative));
        }
        return new Launch(List.of("vllm", "serve"), args, List.of(env("HOME", "/tmp")));
    }

    /**
     * vLLM's {@code --speculative-config} JSON (SpeculativeConfig in vllm/config/speculative.py) for {@code s}, or null
     * when off. A draft model: method draft_model, model its directory in the pod, num_speculative_tokens k and
     * draft_tensor_parallel_size the target's TP {@code tp}. n-gram: method ngram, num_speculative_tokens k, prompt_lookup_max n and prompt_lookup_min 1. The minimum is
     * given because vLLM sets an absent prompt_lookup_min to prompt_lookup_max (only n-token suffixes), while the
     * Tensorlane runtime's proposer tries n down to 1 ({@code NgramProposer}); the same spec means the same proposer.
     */
    static String speculativeConfig(SpeculativeSpec s, String draftDir, int tp) {
        if (s == null) {
            return null;
        }
        Map<String, Object> config = new LinkedHashMap<>();
        if (s.method == SpeculativeSpec.Method.draft) {
            if (draftDir == null || draftDir.isBlank()) {
                throw new IllegalArgumentException("draft speculation needs the draft model's directory in the pod");
            }
            // vllm/config/speculative.py (pinned in engine-flags/vllm.json): SpeculativeMethod "draft_model", model
            // "the name of the draft model", draft_tensor_parallel_size "can only be 1 or the same as the target
            // model's": the target's, which is what the memory plan shards the draft by (DraftPlan)
            config.put("method", "draft_model");
            config.put("model", draftDir);
            config.put("num_speculative_tokens", Speculation.tokens(s));
            config.put("draft_tensor_parallel_size", tp);
            return Serialization.asJson(config);
        }
        config.put("method", "ngram");
        config.put("num_speculative_tokens", Speculation.tokens(s));
        config.put("prompt_lookup_max", Speculation.lookupMax(s));
        config.put("prompt_lookup_min", 1);
        return Serialization.asJson(config);
    }

    @Override
    public int probeTimeoutSeconds() {
        return 5;
    }

    /** {@code gpu_memory_utilization}: static + non-static − the user's reserve, over total memory. */
    @Override
    public double memoryFraction(MemoryPlan plan) {
        return plan.gpuMemoryUtilization();
    }
}
