package io.tensorlane.runtime.openai;

import java.util.List;
import java.util.Map;

/**
 * One chat message for the chat template, in the shape vLLM hands templates: role ({@code system}, {@code user},
 * {@code assistant} or {@code tool}), its text (content parts joined with newlines, as vLLM does; an assistant's null
 * content becomes ""), an assistant's {@code tool_calls} ({@code {"id", "type", "function": {"name", "arguments"}}},
 * the arguments parsed from their JSON string into an object as vLLM's chat_utils does; null when the message has none
 * or an empty list), a tool message's {@code tool_call_id} and the message's {@code name} (null when absent).
 */
public record ChatMessage(
        String role, String content, List<Map<String, Object>> toolCalls, String toolCallId, String name) {
    public ChatMessage {
        toolCalls = toolCalls == null ? null : List.copyOf(toolCalls);
    }

    /** A message with only a role and text. */
    public ChatMessage(String role, String content) {
        this(role, content, null, null, null);
    }
}
