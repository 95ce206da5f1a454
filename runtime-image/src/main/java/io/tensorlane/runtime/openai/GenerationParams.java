package io.tensorlane.runtime.openai;

import java.util.List;

/**
 * The sampling and output options of a completions or chat request, normalized and validated.
 *
 * @param temperature default 1.0 (OpenAI's, and vLLM's when the model has no generation_config); 0 is greedy
 * @param topP in (0, 1]; 1 is off
 * @param topK -1 is off (a request's 0 is normalized to -1), else at least 1
 * @param minP in [0, 1]; 0 is off
 * @param seed null when the client gave none
 * @param maxTokens null: fill the context ({@link RequestValidator#effectiveMaxTokens}); 0 only with {@code echo}: the
 *     prompt is scored, nothing is generated ({@link #scoresOnly})
 * @param stop stop strings (never null, none empty)
 * @param stopTokenIds extra stop token ids besides EOS (never null)
 * @param n completions per prompt
 * @param stream answer as server-sent events
 * @param includeUsage {@code stream_options.include_usage}: send a usage chunk before [DONE]
 * @param ignoreEos keep generating past EOS (vLLM extension)
 * @param speculative {@code "speculative": false} opts this request out of the server's speculative decoding (a
 *                    Tensorlane extension, default true; the tokens are the same either way, only their speed differs)
 * @param logprobs null: no logprobs; k &gt;= 0: the chosen token's logprob and the k most probable alternatives
 *     (completions' {@code logprobs: k}; chat's {@code logprobs: true} with {@code top_logprobs: k})
 * @param skipSpecialTokens leave special tokens out of the text (vLLM's default true)
 * @param includeStopStrInOutput keep a matched stop string in the text (vLLM's default false)
 * @param responseFormat {@code response_format} json_object / json_schema (null: text)
 * @param penalties presence/frequency/repetition penalties, logit_bias, min_tokens ({@link Penalties#NONE}: none)
 * @param echo completions' {@code echo}: the prompt's text before the answer, and with {@code logprobs} the prompt's
 *     tokens' logprobs before the answer's ({@link #promptLogprobs})
 */
public record GenerationParams(
        double temperature,
        double topP,
        int topK,
        double minP,
        Long seed,
        Integer maxTokens,
        List<String> stop,
        List<Integer> stopTokenIds,
        int n,
        boolean stream,
        boolean includeUsage,
        boolean ignoreEos,
        Integer logprobs,
        boolean skipSpecialTokens,
        boolean includeStopStrInOutput,
        ResponseFormat responseFormat,
        boolean speculative,
        Penalties penalties,
        boolean echo) {
    public GenerationParams {
        penalties = penalties == null ? Penalties.NONE : penalties;
        stop = stop == null ? List.of() : List.copyOf(stop);
        stopTokenIds = stopTokenIds == null ? List.of() : List.copyOf(stopTokenIds);
    }

    /**
     * A structured answer: {@code json_object} (schema null, any JSON object) or {@code json_schema} (its schema).
     *
     * @param name json_schema.name, null when absent
     */
    public record ResponseFormat(com.fasterxml.jackson.databind.JsonNode schema, String name) {}

    /**
     * The penalty fields, validated ({@link PenaltyFields}).
     *
     * @param presence presence_penalty in [-2, 2], 0 off
     * @param frequency frequency_penalty in [-2, 2], 0 off
     * @param repetition repetition_penalty &gt; 0, 1 off
     * @param logitBias token id -&gt; bias in [-100, 100]
     * @param minTokens min_tokens, 0 off
     * @param badWords vLLM's bad_words (never null)
     */
    public record Penalties(
            double presence,
            double frequency,
            double repetition,
            java.util.Map<Integer, Double> logitBias,
            int minTokens,
            List<String> badWords) {
        public static final Penalties NONE = new Penalties(0, 0, 1, java.util.Map.of(), 0, List.of());

        public Penalties {
            logitBias = logitBias == null ? java.util.Map.of() : java.util.Map.copyOf(logitBias);
            badWords = badWords == null ? List.of() : List.copyOf(badWords);
        }
    }

    public boolean greedy() {
        return temperature == 0;
    }

    public boolean wantsLogprobs() {
        return logprobs != null;
    }

    /** {@code echo} with {@code max_tokens: 0}: the answer is the prompt (and its logprobs), nothing is generated. */
    public boolean scoresOnly() {
        return echo && maxTokens != null && maxTokens == 0;
    }

    /** The alternatives per prompt token the scheduler gathers: {@code logprobs} with echo, else -1 (none). */
    public int promptLogprobs() {
        return echo && logprobs != null ? logprobs : -1;
    }
}
