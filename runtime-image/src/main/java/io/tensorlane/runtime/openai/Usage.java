package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Token counts of a request: {@code {"prompt_tokens", "total_tokens", "completion_tokens", "prompt_tokens_details":
 * {"cached_tokens"}}}, the last as OpenAI reports it: the prompt tokens whose KV came from the prefix cache.
 */
public record Usage(int promptTokens, int completionTokens, int cachedTokens) {
    /** Counts without cached prompt tokens. */
    public Usage(int promptTokens, int completionTokens) {
        this(promptTokens, completionTokens, 0);
    }

    public int totalTokens() {
        return promptTokens + completionTokens;
    }

    public ObjectNode toJsonNode() {
        ObjectNode n = OpenAiJson.MAPPER.createObjectNode();
        n.put("prompt_tokens", promptTokens);
        n.put("total_tokens", totalTokens());
        n.put("completion_tokens", completionTokens);
        n.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
        return n;
    }
}
