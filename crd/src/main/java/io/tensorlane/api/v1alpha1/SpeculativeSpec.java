package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * Speculative decoding ({@code spec.serving.speculative}): a proposer guesses up to {@link #numSpeculativeTokens}
 * tokens per sequence and step and the target model verifies them in one forward pass. {@code ngram} (prompt lookup,
 * no model) or {@code draft}: a smaller model with the target's tokenizer, named in {@link #draftModel} the way
 * {@code spec.model} names the target (the same type: name, source, tokenSecret, storage, dtype and the overrides),
 * read and fetched into the pod the same way. The two CEL rules say at apply time (Kubernetes 1.25+) that a draft
 * model goes with {@code draft} and only with it; the operator's validator says the same as InvalidSpec where the API
 * server has no CEL.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(value = "self.method != 'draft' || has(self.draftModel)", message = SpeculativeSpec.DRAFT_NEEDS_MODEL)
@ValidationRule(
        value = "self.method != 'ngram' || !has(self.draftModel)",
        message = SpeculativeSpec.NGRAM_TAKES_NO_MODEL)
public class SpeculativeSpec {
    /** The CEL rule's message (and the validator's): method draft without a draft model. */
    public static final String DRAFT_NEEDS_MODEL =
            "draftModel is required when method is draft (a smaller model with the target's tokenizer)";
    /** The CEL rule's message (and the validator's): a draft model with method ngram. */
    public static final String NGRAM_TAKES_NO_MODEL =
            "draftModel is only for method draft; ngram proposes from the prompt without a model";

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

    /** Proposers. */
    public enum Method {
        ngram,
        draft
    }
}
