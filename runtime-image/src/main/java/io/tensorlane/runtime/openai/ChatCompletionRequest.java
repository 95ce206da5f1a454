package io.tensorlane.runtime.openai;

import java.util.List;
import java.util.Map;

/**
 * A validated {@code POST /v1/chat/completions} request ({@link RequestParser#parseChat}).
 *
 * @param messages the conversation, in order
 * @param tools the function schemas for the template (only with tool_choice "none", or empty), null when absent
 * @param documents the documents for the template, null when absent
 * @param addGenerationPrompt end the rendered template with the assistant's turn header (default true)
 * @param continueFinalMessage render the last (assistant) message open-ended so that generation continues it
 * @param chatTemplateKwargs extra variables for the chat template, passed through (never null)
 */
public record ChatCompletionRequest(
        String model,
        List<ChatMessage> messages,
        List<Map<String, Object>> tools,
        List<Map<String, Object>> documents,
        GenerationParams params,
        boolean addGenerationPrompt,
        boolean continueFinalMessage,
        Map<String, Object> chatTemplateKwargs,
        String user) {
    public ChatCompletionRequest {
        messages = List.copyOf(messages);
        tools = tools == null ? null : List.copyOf(tools);
        documents = documents == null ? null : List.copyOf(documents);
        chatTemplateKwargs = chatTemplateKwargs == null ? Map.of() : chatTemplateKwargs;
    }
}
