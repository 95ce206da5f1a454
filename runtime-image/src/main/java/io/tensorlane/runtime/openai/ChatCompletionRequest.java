package io.tensorlane.runtime.openai;

import java.util.List;
import java.util.Map;

/**
 * A validated {@code POST /v1/chat/completions} request ({@link RequestParser#parseChat}).
 *
 * @param messages the conversation, in order
 * @param addGenerationPrompt end the rendered template with the assistant's turn header (default true)
 * @param continueFinalMessage render the last (assistant) message open-ended so that generation continues it
 * @param chatTemplateKwargs extra variables for the chat template, passed through (never null)
 */
public record ChatCompletionRequest(
        String model,
        List<ChatMessage> messages,
        GenerationParams params,
        boolean addGenerationPrompt,
        boolean continueFinalMessage,
        Map<String, Object> chatTemplateKwargs,
        String user) {
    public ChatCompletionRequest {
        messages = List.copyOf(messages);
        chatTemplateKwargs = chatTemplateKwargs == null ? Map.of() : chatTemplateKwargs;
    }
}
