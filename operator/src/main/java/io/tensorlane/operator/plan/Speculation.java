package io.tensorlane.operator.plan;

import io.tensorlane.api.v1alpha1.InferenceDeploymentSpec;
import io.tensorlane.api.v1alpha1.ModelSpec;
import io.tensorlane.api.v1alpha1.SpeculativeSpec;
import io.tensorlane.contract.MemoryBudget;
import java.util.List;

/**
 * {@code spec.serving.speculative}: what the schema cannot say about it (InvalidSpec messages naming the field) and
 * what its verify steps add to the memory plan (a draft model's own memory: {@link DraftPlan}). Pure.
 */
public final class Speculation {
    private Speculation() {}

    /** The speculation of {@code spec}, or null when off (no {@code spec.serving.speculative}). */
    public static SpeculativeSpec of(InferenceDeploymentSpec spec) {
        return spec == null || spec.serving == null ? null : spec.serving.speculative;
    }

    /** The draft model of {@code spec} (spec.serving.speculative.draftModel with method draft), or null. */
    public static ModelSpec draftModel(InferenceDeploymentSpec spec) {
        SpeculativeSpec s = of(spec);
        return s == null || s.method != SpeculativeSpec.Method.draft ? null : s.draftModel;
    }

    /**
     * The InvalidSpec message for the speculation of {@code spec} (its facts filled in), or null: {@link
     * #problem(SpeculativeSpec)}, then what a draft model needs: its weight bytes (read from it, or given) and a
     * geometry the draft's tensor parallelism ({@link DraftPlan#tensor}) can split.
     */
    public static String problem(InferenceDeploymentSpec spec) {
        SpeculativeSpec s = of(spec);
        String p = problem(s);
        if (p != null || s == null || s.method != SpeculativeSpec.Method.draft) {
            return p;
        }
        String where = "spec.serving.speculative.draftModel";
        ModelSpec d = s.draftModel;
        if (d.weightBytes == null || d.weightBytes < 1) {
            return where + ".weightBytes is required and must be > 0 (read from the draft model, or given)";
        }
        List<String> geometry = GeometryCheck.problems(d.geometry, DraftPlan.tensor(spec), where + ".geometry");
        return geometry.isEmpty() ? null : String.join("; ", geometry);
    }

    /**
     * The InvalidSpec message for {@code s}, or null when it can be served (or is absent). Bounds are checked here too:
     * an object written before the schema had them, or by a client that skips validation, is refused with the field;
     * that a draft model goes with method draft and only with it is said here only (no CEL in the CRD: see {@link
     * SpeculativeSpec}).
     */
    public static String problem(SpeculativeSpec s) {
        if (s == null) {
            return null;
        }
        if (s.method == null) {
            return "spec.serving.speculative.method is required (ngram or draft)";
        }
        if (s.method == SpeculativeSpec.Method.draft && s.draftModel == null) {
            return "spec.serving.speculative." + SpeculativeSpec.DRAFT_NEEDS_MODEL;
        }
        if (s.method == SpeculativeSpec.Method.ngram && s.draftModel != null) {
            return "spec.serving.speculative." + SpeculativeSpec.NGRAM_TAKES_NO_MODEL;
        }
        if (s.draftModel != null && (s.draftModel.name == null || s.draftModel.name.isBlank())) {
            return "spec.serving.speculative.draftModel.name is required";
        }
        if (s.method == SpeculativeSpec.Method.ngram && s.disableByBatchSize != null) {
            return "spec.serving.speculative." + SpeculativeSpec.NGRAM_TAKES_NO_BATCH_LIMIT;
        }
        Integer b = s.disableByBatchSize;
        if (b != null
                && (b < SpeculativeSpec.MIN_DISABLE_BY_BATCH_SIZE || b > SpeculativeSpec.MAX_DISABLE_BY_BATCH_SIZE)) {
            return "spec.serving.speculative.disableByBatchSize must be " + SpeculativeSpec.MIN_DISABLE_BY_BATCH_SIZE
                    + ".." + SpeculativeSpec.MAX_DISABLE_BY_BATCH_SIZE + ", got " + b;
        }
        Integer k = s.numSpeculativeTokens;
        if (k != null && (k < 1 || k > SpeculativeSpec.MAX_TOKENS)) {
            return "spec.serving.speculative.numSpeculativeTokens must be 1.." + SpeculativeSpec.MAX_TOKENS + ", got "
                    + k;
        }
        Integer n = s.promptLookupMax;
        if (n != null && (n < 1 || n > SpeculativeSpec.MAX_LOOKUP)) {
            return "spec.serving.speculative.promptLookupMax must be 1.." + SpeculativeSpec.MAX_LOOKUP + ", got " + n;
        }
        return null;
    }

    /** Proposed tokens per sequence and step (k), the schema default where unset. */
    public static int tokens(SpeculativeSpec s) {
        return s.numSpeculativeTokens != null ? s.numSpeculativeTokens : new SpeculativeSpec().numSpeculativeTokens;
    }

    /**
     * The Tensorlane runtime's draft {@code batch} (speculation in steps with at most that many decoding sequences) for
     * {@code s.disableByBatchSize} N, or null where unset (the runtime's default). vLLM's disable_by_batch_size, whose
     * name and count the field takes, stops speculation once N or more requests run, so the draft guesses with at most
     * N - 1: {@code batch = N - 1}.
     */
    public static Integer runtimeBatch(SpeculativeSpec s) {
        return s.disableByBatchSize == null ? null : s.disableByBatchSize - 1;
    }

    /** The n-gram proposer's longest suffix (n), the schema default where unset. */
    public static int lookupMax(SpeculativeSpec s) {
        return s.promptLookupMax != null ? s.promptLookupMax : new SpeculativeSpec().promptLookupMax;
    }

    /**
     * Extra bytes on one GPU for the verify steps' logits: 0 without speculation (or without a vocabulary size), else
     * {@link MemoryBudget#speculativeLogitsBytes} of the vocabulary, {@code spec.serving.maxBatchTokens} and k: the
     * growth of the two full-vocabulary fp32 buffers {@link MemoryBudget#activationBytes} counts from {@code maxSeqs}
     * to {@code maxSeqs × (k + 1)} rows, {@code maxSeqs = min(maxBatchTokens, MemoryBudget.MAX_SEQUENCES)}. The
     * Tensorlane runtime sizes its logits buffers for {@code max(maxSeqs, maxSeqs × (k + 1))} rows ({@code
     * SpeculativeConfig.logitRows} and {@code EngineArgs.Resolved.logitRows} in runtime-image; {@code RankLogits}
     * allocates {@code 4 × rows × vocab} bytes per buffer: one at TP 1, the gathered and output buffers of the padded
     * vocabulary plus the rank's shard at TP > 1).
     */
    public static long logitsBytes(InferenceDeploymentSpec spec) {
        int k = verifiedTokens(spec);
        if (k == 0) {
            return 0;
        }
        Integer vocab = spec.model.geometry.vocabSize;
        if (vocab == null || vocab <= 0) {
            return 0;
        }
        return MemoryBudget.speculativeLogitsBytes(vocab, spec.serving.maxBatchTokens, k);
    }

    /**
     * Proposed tokens a verify step checks per sequence (k, each adding a logits row), for both proposers: 0 without
     * speculation.
     */
    public static int verifiedTokens(InferenceDeploymentSpec spec) {
        SpeculativeSpec s = of(spec);
        return s == null || s.method == null ? 0 : tokens(s);
    }
}
