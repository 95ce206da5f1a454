package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * vLLM's {@code POST /tokenize} and {@code POST /detokenize} bodies (its serving_tokenization protocol): tokenize takes
 * either {@code prompt} (a string; {@code add_special_tokens} default true) or {@code messages} (rendered through the
 * chat template as chat completions are, with {@code add_generation_prompt} default true, {@code tools},
 * {@code chat_template_kwargs}; {@code add_special_tokens} default false), and {@code return_token_strs}; detokenize
 * takes {@code tokens}, ids inside the vocabulary.
 */
public final class TokenizeRequests {
    private TokenizeRequests() {}

    /**
     * A tokenize request: {@code prompt} set and {@code chat} null, or the reverse.
     *
     * @param chat the messages and their template options, parsed as a chat completions request
     */
    public record Tokenize(
            String model,
            String prompt,
            ChatCompletionRequest chat,
            boolean addSpecialTokens,
            boolean returnTokenStrs) {}

    public static Tokenize parseTokenize(byte[] body, ModelInfo m) {
        JsonFields f = new JsonFields(OpenAiJson.readBody(body), "");
        String model = RequestValidator.checkModel(m, f.string("model"));
        boolean strs = f.bool("return_token_strs", false);
        boolean hasPrompt = f.has("prompt"), hasMessages = f.has("messages");
        if (hasPrompt == hasMessages) {
            throw OpenAiException.badRequest(
                    hasPrompt ? "messages" : "prompt",
                    "give either 'prompt' (a string) or 'messages', not " + (hasPrompt ? "both" : "neither"));
        }
        if (hasPrompt) {
            String prompt = f.string("prompt");
            return new Tokenize(model, prompt, null, f.bool("add_special_tokens", true), strs);
        }
        ChatCompletionRequest chat = RequestParser.parseChat(body, m);
        return new Tokenize(model, null, chat, f.bool("add_special_tokens", false), strs);
    }

    /** A detokenize request's token ids, each in [0, vocab). */
    public static int[] parseDetokenize(byte[] body, ModelInfo m) {
        JsonFields f = new JsonFields(OpenAiJson.readBody(body), "");
        RequestValidator.checkModel(m, f.string("model"));
        JsonNode n = f.node("tokens");
        if (n == null) {
            throw OpenAiException.badRequest("tokens", "'tokens' is required");
        }
        if (!n.isArray()) {
            throw f.typeError("tokens", "an array of token ids", n);
        }
        List<Integer> ids = new ArrayList<>();
        for (JsonNode e : n) {
            if (!e.canConvertToInt() || !e.isIntegralNumber() || e.asInt() < 0 || e.asInt() >= m.vocabSize()) {
                throw OpenAiException.badRequest(
                        "tokens", "'tokens' must hold token ids in [0, " + m.vocabSize() + "), got " + e);
            }
            ids.add(e.asInt());
        }
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }
}
