package io.tensorlane.runtime.openai;

import java.util.List;

/**
 * Checks that need the served model: the model name, prompt token ids, and (after tokenization) the context length,
 * with vLLM's wording so that clients and gateways that parse it (LiteLLM, retry-with-smaller-max_tokens loops) work.
 */
public final class RequestValidator {
    /** Most completions per prompt ({@code n}). */
    public static final int MAX_N = 16;
    /** Most alternatives per token ({@code logprobs}, {@code top_logprobs}); vLLM's default max_logprobs. */
    public static final int MAX_LOGPROBS = 20;

    private RequestValidator() {}

    /** The served model's id when {@code requested} is null (vLLM's default), else 404 unless it is the served one. */
    public static String checkModel(ModelInfo m, String requested) {
        if (requested == null) {
            return m.id();
        }
        if (!requested.equals(m.id())) {
            throw OpenAiException.modelNotFound(requested);
        }
        return requested;
    }

    /** 400 unless every id is in [0, vocabSize); vLLM's "Token id X is out of vocabulary". */
    public static void checkTokenIds(ModelInfo m, List<Integer> ids, String param) {
        for (int id : ids) {
            if (id < 0 || id >= m.vocabSize()) {
                throw OpenAiException.badRequest(
                        param,
                        "Token id " + id + " is out of vocabulary (the vocabulary has " + m.vocabSize() + " tokens)");
            }
        }
    }

    /**
     * vLLM's context-length check after tokenization (its current wording, the same for chat and completions): the
     * prompt must leave room for at least one token, and prompt plus {@code max_tokens} (when given) must fit.
     *
     * @param chat true for chat completions (the wording is the same; kept for callers and future divergence)
     */
    public static void checkLength(ModelInfo m, int promptTokens, Integer maxTokens, boolean chat) {
        int len = m.maxModelLen();
        if (maxTokens == null) {
            if (promptTokens >= len) {
                throw contextError(
                        "This model's maximum context length is " + len + " tokens. However, your request has "
                                + promptTokens + " input tokens. Please reduce the length of the input messages.");
            }
            return;
        }
        long total = (long) promptTokens + maxTokens;
        if (total > len) {
            throw contextError("This model's maximum context length is " + len + " tokens. However, you requested "
                    + maxTokens + " output tokens and your prompt contains " + promptTokens
                    + " input tokens, for a total of "
                    + total + " tokens (" + promptTokens + " + " + maxTokens + " = " + total + " > " + len
                    + "). Please reduce "
                    + "the length of the input prompt or the number of requested output tokens.");
        }
    }

    private static OpenAiException contextError(String message) {
        return new OpenAiException(
                400, OpenAiException.INVALID_REQUEST, "input_tokens", "context_length_exceeded", message);
    }

    /** The completion budget: {@code maxTokens} when given, else the rest of the context (call after checkLength). */
    public static int effectiveMaxTokens(ModelInfo m, int promptTokens, Integer maxTokens) {
        return maxTokens != null ? maxTokens : Math.max(0, m.maxModelLen() - promptTokens);
    }
}
