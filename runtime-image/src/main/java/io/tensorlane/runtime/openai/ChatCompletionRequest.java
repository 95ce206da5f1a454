package io.tensorlane.runtime.openai;

import java.util.List;
import java.util.Map;

/**
 * A validated {@code POST /v1/chat/completions} request ({@link RequestParser#parseChat}).
 *
 * @param messages the conversation, in order
 * @param tools the function schemas for the template, null when absent
 * @param toolChoice what becomes of the tools ({@link ToolChoice}; NONE without tools)
 * @param parallelToolCalls {@code parallel_tool_calls} (default true): false keeps at most one call
 * @param documents the documents for the template, null when absent
 * @param addGenerationPrompt end the rendered template with the assistant's turn header (default true)
 * @param continueFinalMessage render the last (assistant) message open-ended so that generation continues it
 * @param chatTemplateKwargs extra variables for the chat template, passed through (never null)
 */
public record ChatCompletionRequest(
        String model,
        List<ChatMessage> messages,
        List<Map<String, Object>> tools,
        ToolChoice toolChoice,
        boolean parallelToolCalls,
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
        toolChoice = toolChoice == null ? ToolChoice.NONE : toolChoice;
    }

    /** The {@code function} object (name, parameters, ...) of the tool named {@code name}, or null. */
    public Map<String, Object> toolFunction(String name) {
        return ToolFields.function(tools, name);
    }
}
