package io.tensorlane.runtime.openai;

import java.util.List;

/**
 * A validated {@code POST /v1/completions} request ({@link RequestParser#parseCompletion}).
 *
 * @param model the served model's id (the request's {@code model}, or the served one when absent, as in vLLM)
 * @param prompts one or more prompts; each is answered with {@code params.n()} choices, choice index
 *     {@code promptIndex * n + i} as in vLLM
 * @param user the client's {@code user} tag, or null
 */
public record CompletionRequest(String model, List<Prompt> prompts, GenerationParams params, String user) {
    public CompletionRequest {
        prompts = List.copyOf(prompts);
    }
}
