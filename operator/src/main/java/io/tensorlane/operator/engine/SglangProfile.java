package io.tensorlane.operator.engine;

import static io.tensorlane.operator.engine.EngineProfile.env;

import io.tensorlane.api.v1alpha1.EngineSpec.EngineType;
import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec.DType;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.operator.plan.MemoryPlan;
import io.tensorlane.operator.plan.Plan;
import io.tensorlane.operator.plan.Speculation;
import io.tensorlane.operator.plan.Units;
import java.util.ArrayList;
import java.util.List;

/**
 * SGLang ({@code python3 -m sglang.launch_server}): {@code --tp-size} (not the prefix {@code --tp}), the model's dtype as
 * {@code --dtype}, {@code --enable-metrics} (SGLang serves {@code /metrics} only with it), a batch token budget above
 * SGLang's default {@code max_prefill_tokens} ({@value #DEFAULT_MAX_PREFILL_TOKENS}) also as
 * {@code --max-prefill-tokens}, the static fraction as {@code --mem-fraction-static}, an FP8 KV
 * cache as {@code --kv-cache-dtype fp8_e4m3} (its choices: auto, fp8_e4m3, fp8_e5m2, bf16/bfloat16; any other plan
 * keeps its default auto, the model's activation dtype, which is what the plan sized), n-gram speculation as {@code
 * --speculative-algorithm NGRAM} ({@link #speculativeArgs}), a draft model as {@code STANDALONE} ({@link
 * #draftArgs}), its own custom allreduce
 * switched off when the plan says NCCL, PyTorch's OOM lines, no preflight (it runs its own kernels), an image is
 * required.
 */
public final class SglangProfile extends PythonServerProfile {
    /** SGLang's default {@code max_prefill_tokens}: a prefill batch holds no more tokens than this unless told. */
    static final int DEFAULT_MAX_PREFILL_TOKENS = 16_384;

    /**
     * {@code SGLANG_HEALTH_CHECK_TIMEOUT}'s default: SGLang's {@code /health} waits this long for a generated token
     * before it answers 503.
     */
    static final int HEALTH_CHECK_TIMEOUT_SECONDS = 20;

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
                "--tp-size",
                Integer.toString(tp),
                "--mem-fraction-static",
                Units.fraction(memoryFraction(plan.memory())),
                "--context-length",
                Integer.toString(spec.serving.maxModelLength),
                "--chunked-prefill-size",
                Integer.toString(spec.serving.maxBatchTokens),
                "--enable-metrics"));
        if (spec.serving.maxBatchTokens > DEFAULT_MAX_PREFILL_TOKENS) {
            args.addAll(List.of("--max-prefill-tokens", Integer.toString(spec.serving.maxBatchTokens)));
        }
        String dtype = torchDtype(spec.model.dtype);
        if (dtype != null) {
            args.addAll(List.of("--dtype", dtype));
        }
        if (plan.memory().kvCacheDtype() == DType.fp8) {
            args.addAll(List.of("--kv-cache-dtype", "fp8_e4m3"));
        }
        if (tp > 1 && !plan.allreduce().custom()) {
            args.add("--disable-custom-all-reduce");
        }
        args.addAll(speculativeArgs(Speculation.of(spec), model.draftDir()));
        return new Launch(List.of("python3", "-m", "sglang.launch_server"), args, List.of(env("HOME", "/tmp")));
    }

    /**
     * SGLang's n-gram speculation for {@code s} (none when off): {@code --speculative-algorithm NGRAM} and {@code
     * --speculative-num-draft-tokens k + 1}. SGLang's count includes the last verified token: its n-gram worker
     * (python/sglang/srt/speculative/ngram_worker.py) verifies {@code draft_token_num} tokens per request, starting at
     * {@code seq_lens}, with the accepted length starting at 1, so k proposed tokens are k + 1 draft tokens.
     * {@code promptLookupMax} has no SGLang counterpart (its matcher is a trie with its own window and BFS settings,
     * left at their defaults); it is not passed.
     */
    static List<String> speculativeArgs(SpeculativeSpec s, String draftDir) {
        if (s == null) {
            return List.of();
        }
        if (s.method == SpeculativeSpec.Method.draft) {
            return draftArgs(Speculation.tokens(s), draftDir);
        }
        return List.of(
                "--speculative-algorithm",
                "NGRAM",
                "--speculative-num-draft-tokens",
                Integer.toString(Speculation.tokens(s) + 1));
    }

    /**
     * SGLang's speculation with a separate small draft model: {@code --speculative-algorithm STANDALONE} (its help
     * text's builtins; the docs' "You have a smaller draft LLM: use STANDALONE"), {@code --speculative-draft-model-path}
     * the draft's directory in the pod, {@code --speculative-num-steps k} (draft steps a verify checks), {@code
     * --speculative-eagle-topk 1} (one chain of guesses, not a tree: what the other engines propose) and {@code
     * --speculative-num-draft-tokens k + 1} (SGLang counts the last verified token, as for n-gram; with top-k 1 it is
     * num_steps + 1). Names pinned in {@code engine-flags/sglang.json}.
     */
    static List<String> draftArgs(int k, String draftDir) {
        if (draftDir == null || draftDir.isBlank()) {
            throw new IllegalArgumentException("draft speculation needs the draft model's directory in the pod");
        }
        return List.of(
                "--speculative-algorithm",
                "STANDALONE",
                "--speculative-draft-model-path",
                draftDir,
                "--speculative-num-steps",
                Integer.toString(k),
                "--speculative-eagle-topk",
                "1",
                "--speculative-num-draft-tokens",
                Integer.toString(k + 1));
    }

    /** Its health timeout and 5 s for the answer to arrive. */
    @Override
    public int probeTimeoutSeconds() {
        return HEALTH_CHECK_TIMEOUT_SECONDS + 5;
    }

    /** {@code mem_fraction_static}: weights + KV cache over total memory. */
    @Override
    public double memoryFraction(MemoryPlan plan) {
        return plan.staticFraction();
    }
}
