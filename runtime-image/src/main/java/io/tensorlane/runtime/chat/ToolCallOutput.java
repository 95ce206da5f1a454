package io.tensorlane.runtime.chat;

import java.util.List;

/**
 * What a model's answer holds once its tool calls are taken out: the text that stays content, and the calls in order.
 * A call's arguments are a JSON string as OpenAI's {@code tool_calls[].function.arguments} carries it, written as
 * Python's {@code json.dumps} (vLLM's parsers) writes it.
 */
public record ToolCallOutput(String content, List<Call> calls) {
    public ToolCallOutput {
        calls = List.copyOf(calls);
    }

    /** One call: the function's name and its arguments as a JSON object text. */
    public record Call(String name, String arguments) {}

    static ToolCallOutput text(String content) {
        return new ToolCallOutput(content, List.of());
    }
}
