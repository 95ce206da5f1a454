package io.tensorlane.operator.engine;

import static io.tensorlane.operator.engine.EngineProfile.env;

import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.RollbackStatus.Action;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.EngineEnv;
import io.tensorlane.contract.MoeLimits;
import io.tensorlane.operator.plan.AllreduceChoice;
import io.tensorlane.operator.plan.AllreduceTables;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Speculation;
import io.tensorlane.operator.plan.Units;
import java.util.ArrayList;
import java.util.List;

/**
 * Tensorlane's own runtime: {@code serve} with the whole plan in the environment ({@link EngineEnv}), including the
 * custom allreduce's algorithm table and buffer size and the KV cache's dtype (bf16, fp16, or fp8: e4m3 with
 * per-layer scales, 1 byte an element, as the plan sized it) and tokens, and speculation as {@code
 * TENSORLANE_SPECULATIVE=ngram:k=K,n=N} or {@code draft:<the draft model's directory>,k=K}; reports CUDA OOM as the contract's JSON
 * termination message; measured by the preflight; image defaults to the operator's runtime image. A Mixture of Experts
 * (Qwen3-MoE, Mixtral) is served in bf16/fp16 and FP8 (block-scaled or per-channel experts) and rendered as a dense
 * model is (the runtime reads its experts and their quantization from config.json; a TP size whose share of an
 * expert's down-projection columns cuts the 128x128 scale blocks is refused by the runtime at load, as for dense FP8).
 */
public final class TensorlaneProfile implements EngineProfile {
    @Override
    public EngineType type() {
        return EngineType.Tensorlane;
    }

    @Override
    public Launch launch(InferenceDeploymentSpec spec, Plan plan, ModelLocation model) {
        int tp = spec.parallelism.tensor;
        MemoryPlan mem = plan.memory();
        AllreduceChoice ar = plan.allreduce();
        List<EnvVar> env = new ArrayList<>();
        env.add(env(EngineEnv.MODEL, spec.model.name));
        env.add(env(EngineEnv.MODEL_SOURCE, model.source()));
        env.add(env(EngineEnv.MODEL_DIR, model.dir()));
        env.add(env(EngineEnv.DTYPE, spec.model.dtype.name()));
        env.add(env(EngineEnv.PORT, Integer.toString(spec.serving.port)));
        env.add(env(EngineEnv.WORLD_SIZE, Integer.toString(tp)));
        env.add(env(EngineEnv.ALLREDUCE, ar.mode().name()));
        if (ar.custom()) {
            env.add(env(
                    EngineEnv.ALGORITHM_TABLE,
                    Serialization.asJson(
                            AllreduceTables.toKernelTable(tp, ar.measured() ? "preflight" : "planner", ar.table()))));
            env.add(env(EngineEnv.MAX_MESSAGE_BYTES, Long.toString(ar.maxMessageBytes())));
        }
        env.add(env(EngineEnv.MEMORY_FRACTION, Units.fraction(memoryFraction(mem))));
        env.add(env(EngineEnv.KV_CACHE_TOKENS, Long.toString(mem.kvCacheTokens())));
        env.add(env(EngineEnv.KV_CACHE_DTYPE, mem.kvCacheDtype().name()));
        env.add(env(EngineEnv.MAX_MODEL_LENGTH, Integer.toString(spec.serving.maxModelLength)));
        env.add(env(EngineEnv.MAX_BATCH_TOKENS, Integer.toString(spec.serving.maxBatchTokens)));
        String speculative = speculative(Speculation.of(spec), model.draftDir());
        if (speculative != null) {
            env.add(env(EngineEnv.SPECULATIVE, speculative));
        }
        return new Launch(null, List.of("serve"), env);
    }

    /**
     * The {@link EngineEnv#SPECULATIVE} value of {@code s} in the runtime's grammar ({@code SpeculativeConfig.parse}:
     * {@code ngram:k=K,n=N}, or {@code draft:DIR,k=K[,batch=B]} with the draft model's directory in the pod and {@code B =
     * disableByBatchSize - 1} ({@link Speculation#runtimeBatch}: the runtime guesses with at most B decoding
     * sequences, vLLM's count stops at N); without disableByBatchSize the runtime's default, at most one); null when
     * off.
     *
     * @param draftDir the draft model's directory in the pod (method draft)
     */
    static String speculative(SpeculativeSpec s, String draftDir) {
        if (s == null) {
            return null;
        }
        if (s.method == SpeculativeSpec.Method.draft) {
            if (draftDir == null || draftDir.isBlank() || draftDir.contains(",")) {
                throw new IllegalArgumentException("draft speculation needs the draft model's directory in the pod "
                        + "(no comma: the runtime's grammar separates fields by commas), got " + draftDir);
            }
            Integer batch = Speculation.runtimeBatch(s);
            return "draft:" + draftDir + ",k=" + Speculation.tokens(s) + (batch == null ? "" : ",batch=" + batch);
        }
        return "ngram:k=" + Speculation.tokens(s) + ",n=" + Speculation.lookupMax(s);
    }

    /** {@link EngineEnv#MEMORY_FRACTION} is the static pool: weights + KV cache over total memory. */
    @Override
    public double memoryFraction(MemoryPlan plan) {
        return plan.staticFraction();
    }

    @Override
    public String readyPath() {
        return "/health/ready";
    }

    @Override
    public String livePath() {
        return "/health/live";
    }

    /** The runtime's health server answers from its state ({@code HealthServer}). */
    @Override
    public int probeTimeoutSeconds() {
        return 5;
    }

    /** None: every CUDA OOM the runtime meets ends in its JSON termination message. */
    @Override
    public List<String> oomLogMarkers() {
        return List.of();
    }

    @Override
    public boolean preflight() {
        return true;
    }

    /** The operator's runtime image ({@code tensorlane.runtime-image}): this engine is the runtime. */
    @Override
    public String defaultImage(String runtimeImage) {
        return runtimeImage;
    }

    /** The image defaults to the runtime's; every KV cache dtype is the runtime's; experts in bf16, fp16 or FP8. */
    @Override
    public String validate(InferenceDeploymentSpec spec) {
        if (spec.model != null && spec.model.geometry != null && spec.model.geometry.moe()) {
            return routerLimit(spec.model.geometry.experts, spec.model.geometry.expertsPerToken);
        }
        return null;
    }

    /**
     * The InvalidSpec message of a MoE geometry beyond what the runtime's router takes ({@link MoeLimits}), or null.
     */
    public static String routerLimit(Integer experts, Integer topK) {
        if (experts != null && experts > MoeLimits.MAX_EXPERTS) {
            return "spec.model.geometry.experts " + experts + ": the Tensorlane engine's router takes at most "
                    + MoeLimits.MAX_EXPERTS + " experts; use engine SGLang or VLLM";
        }
        if (topK != null && topK > MoeLimits.MAX_TOP_K) {
            return "spec.model.geometry.expertsPerToken " + topK + ": the Tensorlane engine's router takes at most "
                    + MoeLimits.MAX_TOP_K + " experts per token; use engine SGLang or VLLM";
        }
        return null;
    }

    /** All of them: the fraction, the buffer size and the allreduce mode are each in the rendered environment. */
    @Override
    public List<Action> remediations() {
        return Action.remediations();
    }
}
