package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** Token counts of a request: {@code {"prompt_tokens", "completion_tokens", "total_tokens"}}. */
public record Usage(int promptTokens, int completionTokens) {
    public int totalTokens() {
        return promptTokens + completionTokens;
    }

    public ObjectNode toJsonNode() {
        ObjectNode n = OpenAiJson.MAPPER.createObjectNode();
        n.put("prompt_tokens", promptTokens);
        n.put("total_tokens", totalTokens());
        n.put("completion_tokens", completionTokens);
        return n;
    }
}
