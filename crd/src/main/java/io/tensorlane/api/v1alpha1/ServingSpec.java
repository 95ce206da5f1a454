package io.tensorlane.api.v1alpha1;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Request-shape limits. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ServingSpec {
    @Min(16)
    @Default("8192")
    @JsonPropertyDescription("Maximum sequence length (prompt + output) per request. Default 8192.")
    public Integer maxModelLength = 8192;

    @Min(16)
    @Default("8192")
    @JsonPropertyDescription("Maximum tokens processed in one forward batch; sizes activations. Default 8192.")
    public Integer maxBatchTokens = 8192;

    @Min(1)
    @Max(65535)
    @Default("8000")
    @JsonPropertyDescription("HTTP port the engine serves on. Default 8000.")
    public Integer port = 8000;

    @Default("auto")
    @JsonPropertyDescription(
            "Element type of the KV cache: auto (the model's activation dtype: bf16 for an FP8 checkpoint unless its "
                    + "config.json says float16, else the model's dtype), bf16, fp16 or fp8 (e4m3, 1 byte per element: "
                    + "twice the tokens of bf16 in the same memory, with per-layer k/v scales from the checkpoint or 1.0; "
                    + "SGLang fp8_e4m3, vLLM fp8). Sizes the KV cache in the memory plan. Default auto.")
    public KvCacheDtype kvCacheDtype = KvCacheDtype.auto;

    @JsonPropertyDescription(
            "Speculative decoding, e.g. {method: ngram, numSpeculativeTokens: 4, promptLookupMax: 3} or {method: draft, "
                    + "numSpeculativeTokens: 4, draftModel: {name: org/small}}. Absent: off. ngram: Tensorlane gets "
                    + "TENSORLANE_SPECULATIVE=ngram:k=4,n=3, vLLM --speculative-config with method ngram, SGLang "
                    + "--speculative-algorithm NGRAM with k + 1 draft tokens (promptLookupMax is not passed to SGLang). "
                    + "draft: Tensorlane gets TENSORLANE_SPECULATIVE=draft:<dir>,k=4, vLLM --speculative-config with "
                    + "method draft_model, SGLang --speculative-algorithm STANDALONE with the draft's path. The memory "
                    + "plan counts the verify steps' extra logits rows, and a draft model's weights, KV cache and "
                    + "activations.")
    public SpeculativeSpec speculative;

    /** Element type of the KV cache ({@code auto}: the model's activation dtype). */
    public enum KvCacheDtype {
        auto,
        bf16,
        fp16,
        fp8
    }
}
