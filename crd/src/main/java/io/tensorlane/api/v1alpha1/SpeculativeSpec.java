package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/**
 * Speculative decoding ({@code spec.serving.speculative}): a proposer guesses up to {@link #numSpeculativeTokens}
 * tokens per sequence and step and the target model verifies them in one forward pass. {@code ngram} (prompt lookup,
 * no model) or {@code draft}: a smaller model with the target's tokenizer, named in {@link #draftModel} the way
 * {@code spec.model} names the target (the same type: name, source, tokenSecret, storage, dtype and the overrides),
 * read and fetched into the pod the same way. That a draft model goes with {@code draft} and only with it is the
 * validator's InvalidSpec ({@link #DRAFT_NEEDS_MODEL}, {@link #NGRAM_TAKES_NO_MODEL}), not a CEL rule: a CRD with
 * {@code x-kubernetes-validations} cannot even be installed by server-side apply on the Kubernetes 1.20 API server the
 * project supports and tests against ("field not declared in schema", seen 2026-12-04 with the testkit's control
 * plane). A draft model without a name is refused at apply time (its {@code name} is required, as spec.model's).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SpeculativeSpec {
    /** The validator's message: method draft without a draft model. */
    public static final String DRAFT_NEEDS_MODEL =
            "draftModel is required when method is draft (a smaller model with the target's tokenizer)";
    /** The validator's message: a draft model with method ngram. */
    public static final String NGRAM_TAKES_NO_MODEL =
            "draftModel is only for method draft; ngram proposes from the prompt without a model";

    /** The validator's message: a batch limit with method ngram. */
    public static final String NGRAM_TAKES_NO_BATCH_LIMIT =
            "disableByBatchSize is only for method draft; the Tensorlane runtime's n-gram proposer guesses at every "
                    + "batch size and takes no batch limit";
    /** The engine check's message: a batch limit with an engine other than Tensorlane. */
    public static final String BATCH_LIMIT_TENSORLANE_ONLY =
            "disableByBatchSize is only for engine Tensorlane: the vLLM and SGLang versions the operator renders for "
                    + "have no setting that stops speculation by batch size (remove it, or use engine Tensorlane)";

    /**
     * Smallest {@link #disableByBatchSize}: 1 would switch speculation off in every step (leave speculation out
     * instead), and the runtime's {@code batch} is 1 or more.
     */
    public static final int MIN_DISABLE_BY_BATCH_SIZE = 2;
    /** Largest {@link #disableByBatchSize}: renders the runtime's {@code batch=4095}, inside its 1..4096. */
    public static final int MAX_DISABLE_BY_BATCH_SIZE = 4096;

    /** Most tokens proposed per sequence and step the operator accepts (the runtime takes up to 16). */
    public static final int MAX_TOKENS = 8;
    /** Longest suffix an n-gram proposer matches that the operator accepts (the runtime takes up to 16). */
    public static final int MAX_LOOKUP = 8;

    @Required
    @JsonPropertyDescription(
            "Proposer: ngram (prompt lookup: the last n tokens are matched in the prompt and the output so far; no "
                    + "model) or draft (a smaller model with the target's tokenizer, named in draftModel).")
    public Method method;

    @Min(1)
    @Max(MAX_TOKENS)
    @Default("4")
    @JsonPropertyDescription(
            "Tokens proposed per sequence and step (k); a verify step computes k + 1 logits rows per sequence. Default 4.")
    public Integer numSpeculativeTokens = 4;

    @Min(1)
    @Max(MAX_LOOKUP)
    @Default("3")
    @JsonPropertyDescription(
            "ngram: the longest suffix (n tokens) looked up in the prompt and output; shorter suffixes down to 1 are "
                    + "tried too. Default 3.")
    public Integer promptLookupMax = 3;

    @JsonPropertyDescription("draft: the draft model, named as spec.model names the target (name, source: hf://, "
            + "pvc://, file:// or oci://, tokenSecret, storage, dtype; geometry and weightBytes are read from it and "
            + "may be overridden). It must have the target's tokenizer. It is read by the operator and fetched into "
            + "the pod beside the target (hf://: init container fetch-draft-model into the volume draft-model); the "
            + "memory plan counts its weights and its KV cache (as many tokens as the target's). Required with "
            + "method draft, refused with ngram.")
    public ModelSpec draftModel;

    @Min(MIN_DISABLE_BY_BATCH_SIZE)
    @Max(MAX_DISABLE_BY_BATCH_SIZE)
    @JsonPropertyDescription("draft: no guesses in a step with this many decoding sequences or more; the draft guesses "
            + "only while fewer decode (N here: at most N - 1, the runtime's batch=N-1). Named and counted as vLLM's "
            + "disable_by_batch_size (off at >= N). Absent: the runtime's default, guesses while one sequence "
            + "decodes (as if 2). 2..4096. Engine Tensorlane only (vLLM and SGLang have no such setting: InvalidSpec); "
            + "refused with ngram, whose guesses are made at every batch size.")
    public Integer disableByBatchSize;

    /** Proposers. */
    public enum Method {
        ngram,
        draft
    }
}
