package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/**
 * Speculative decoding ({@code spec.serving.speculative}): a proposer guesses up to {@link #numSpeculativeTokens}
 * tokens per sequence and step and the target model verifies them in one forward pass. Only {@code ngram} (prompt
 * lookup) is served; {@code draft} (a draft model) is accepted by the schema so that it can be refused with a clear
 * InvalidSpec message until the runtime builds it.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class SpeculativeSpec {
    /** Most tokens proposed per sequence and step the operator accepts (the runtime takes up to 16). */
    public static final int MAX_TOKENS = 8;
    /** Longest suffix an n-gram proposer matches that the operator accepts (the runtime takes up to 16). */
    public static final int MAX_LOOKUP = 8;

    @Required
    @JsonPropertyDescription(
            "Proposer: ngram (prompt lookup: the last n tokens are matched in the prompt and the output so far; no "
                    + "model). draft (a smaller model with the same tokenizer) is not supported yet: InvalidSpec.")
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

    /** Proposers. */
    public enum Method {
        ngram,
        draft
    }
}
