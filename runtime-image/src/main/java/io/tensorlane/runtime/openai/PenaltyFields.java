package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads and validates the penalty fields of completions and chat (issue #30): {@code presence_penalty} and
 * {@code frequency_penalty} in [-2, 2] (OpenAI), {@code repetition_penalty} &gt; 0 (vLLM), {@code logit_bias} (token id
 * -&gt; bias in [-100, 100], at most {@link #MAX_LOGIT_BIAS} entries, ids inside the vocabulary), {@code min_tokens}
 * (vLLM: &gt;= 0, at most max_tokens), {@code bad_words} (vLLM: words whose tokens may not be generated in a row; at
 * most {@link #MAX_BAD_WORDS}, none blank).
 */
final class PenaltyFields {
    /** Most logit_bias entries (the GPU sampler's per-row bound, which sizes its penalty buffer). */
    static final int MAX_LOGIT_BIAS = io.tensorlane.contract.SamplingBuffers.MAX_BIAS;
    /** Most bad_words strings (each becomes one or two token sequences). */
    static final int MAX_BAD_WORDS = 64;
    /** Most ids min_tokens may hold back (stop_token_ids; the model's EOS ids come on top, sched.PenaltyState). */
    static final int MAX_MIN_TOKENS_STOP_IDS = 64;

    private PenaltyFields() {}

    static GenerationParams.Penalties read(JsonFields f, ModelInfo m, Integer maxTokens, String maxField, int stopIds) {
        double presence = range(f, "presence_penalty", 0, -2, 2);
        double frequency = range(f, "frequency_penalty", 0, -2, 2);
        Double rep = f.number("repetition_penalty");
        double repetition = rep == null ? 1 : rep;
        if (!(repetition > 0) || Double.isInfinite(repetition)) {
            throw OpenAiException.badRequest(
                    "repetition_penalty", "repetition_penalty must be greater than zero, got " + repetition + ".");
        }
        Integer min = f.integer("min_tokens");
        int minTokens = min == null ? 0 : min;
        if (minTokens < 0) {
            throw OpenAiException.badRequest("min_tokens", "min_tokens must be at least 0, got " + minTokens + ".");
        }
        if (maxTokens != null && minTokens > maxTokens) {
            throw OpenAiException.badRequest(
                    "min_tokens",
                    "min_tokens must be less than or equal to " + maxField + "=" + maxTokens + ", got " + minTokens
                            + ".");
        }
        if (minTokens > 0 && stopIds > MAX_MIN_TOKENS_STOP_IDS) {
            throw OpenAiException.badRequest(
                    "min_tokens",
                    "min_tokens can hold back at most " + MAX_MIN_TOKENS_STOP_IDS + " stop_token_ids, got " + stopIds
                            + ".");
        }
        List<String> badWords = f.stringOrList("bad_words");
        if (badWords != null && badWords.size() > MAX_BAD_WORDS) {
            throw OpenAiException.badRequest(
                    "bad_words",
                    "bad_words may hold at most " + MAX_BAD_WORDS + " words, got " + badWords.size() + ".");
        }
        if (badWords != null && badWords.stream().anyMatch(w -> w.strip().isEmpty())) {
            throw OpenAiException.badRequest("bad_words", "bad_words cannot contain an empty word.");
        }
        return new GenerationParams.Penalties(presence, frequency, repetition, logitBias(f, m), minTokens, badWords);
    }

    private static Map<Integer, Double> logitBias(JsonFields f, ModelInfo m) {
        JsonNode n = f.node("logit_bias");
        if (n == null) {
            return Map.of();
        }
        if (!n.isObject()) {
            throw f.typeError("logit_bias", "an object of token ids to biases", n);
        }
        if (n.size() > MAX_LOGIT_BIAS) {
            throw OpenAiException.badRequest(
                    "logit_bias", "logit_bias may hold at most " + MAX_LOGIT_BIAS + " entries, got " + n.size() + ".");
        }
        Map<Integer, Double> bias = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            int id;
            try {
                id = Integer.parseInt(e.getKey().trim());
            } catch (NumberFormatException ex) {
                throw OpenAiException.badRequest(
                        "logit_bias", "logit_bias keys must be token ids, got '" + e.getKey() + "'.");
            }
            if (id < 0 || id >= m.vocabSize()) {
                throw OpenAiException.badRequest(
                        "logit_bias",
                        "logit_bias token id " + id + " is outside the vocabulary [0, " + m.vocabSize() + ").");
            }
            JsonNode v = e.getValue();
            if (!v.isNumber()) {
                throw OpenAiException.badRequest(
                        "logit_bias", "logit_bias[" + e.getKey() + "] must be a number, got " + v.getNodeType() + ".");
            }
            double b = v.asDouble();
            if (!(b >= -100 && b <= 100)) {
                throw OpenAiException.badRequest(
                        "logit_bias", "logit_bias[" + e.getKey() + "] must be in [-100, 100], got " + b + ".");
            }
            if (bias.put(id, b) != null) {
                throw OpenAiException.badRequest("logit_bias", "logit_bias names token id " + id + " twice.");
            }
        }
        return bias;
    }

    private static double range(JsonFields f, String field, double dflt, double lo, double hi) {
        Double v = f.number(field);
        double d = v == null ? dflt : v;
        if (!(d >= lo && d <= hi)) {
            throw OpenAiException.badRequest(
                    field, field + " must be in [" + (int) lo + ", " + (int) hi + "], got " + d + ".");
        }
        return d;
    }

    /**
     * {@code echo} (completions only): the prompt's text starts each choice's text; with {@code logprobs} the prompt's
     * tokens' logprobs come first; with {@code max_tokens: 0} only the prompt is answered (scoring, as lm-eval-harness
     * asks).
     */
    static boolean echo(JsonFields f, boolean chat) {
        boolean echo = f.bool("echo", false);
        if (echo && chat) {
            throw OpenAiException.notSupported("echo", "'echo' (a completions field; not on chat)");
        }
        return echo;
    }
}
