package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parses and validates request bodies of {@code /v1/completions} and {@code /v1/chat/completions}. Unknown fields are
 * ignored (as vLLM and OpenAI do); every refusal is an {@link OpenAiException} (400, or 404 for an unknown model).
 * The context-length check needs the token count and runs later ({@link RequestValidator#checkLength}).
 */
public final class RequestParser {
    private static final Set<String> ROLES = Set.of("system", "user", "assistant", "tool");
    private static final String PROMPT_SHAPES =
            "a string, an array of strings, an array of token ids, or an array of arrays of token ids";

    private RequestParser() {}

    public static CompletionRequest parseCompletion(byte[] body, ModelInfo m) {
        JsonFields f = new JsonFields(OpenAiJson.readBody(body), "");
        String model = RequestValidator.checkModel(m, f.string("model"));
        List<Prompt> prompts = prompts(f, m);
        String suffix = f.string("suffix");
        if (suffix != null && !suffix.isEmpty()) {
            throw OpenAiException.notSupported("suffix", "'suffix'");
        }
        GenerationParams params = SamplingFields.read(f, m, false);
        return new CompletionRequest(model, prompts, params, f.string("user"));
    }

    public static ChatCompletionRequest parseChat(byte[] body, ModelInfo m) {
        JsonFields f = new JsonFields(OpenAiJson.readBody(body), "");
        String model = RequestValidator.checkModel(m, f.string("model"));
        List<ChatMessage> messages = messages(f);
        ToolFields.refuseRequestTemplate(f);
        List<Map<String, Object>> tools = ToolFields.tools(f);
        ToolChoice toolChoice = ToolFields.toolChoice(f, tools);
        boolean parallelToolCalls = f.bool("parallel_tool_calls", true);
        List<Map<String, Object>> documents = ToolFields.documents(f);
        GenerationParams params = SamplingFields.read(f, m, true);
        boolean addGenerationPrompt = f.bool("add_generation_prompt", true);
        boolean continueFinal = f.bool("continue_final_message", false);
        if (addGenerationPrompt && continueFinal) {
            throw OpenAiException.badRequest(
                    "continue_final_message",
                    "Cannot set both `continue_final_message` and `add_generation_prompt` to True.");
        }
        if (continueFinal
                && !"assistant".equals(messages.get(messages.size() - 1).role())) {
            throw OpenAiException.badRequest(
                    "continue_final_message", "`continue_final_message` needs the last message to be the assistant's.");
        }
        JsonFields kwargs = f.object("chat_template_kwargs");
        Map<String, Object> templateKwargs = kwargs == null
                ? Map.of()
                : Collections.unmodifiableMap(OpenAiJson.MAPPER.convertValue(
                        f.node("chat_template_kwargs"), new TypeReference<Map<String, Object>>() {}));
        return new ChatCompletionRequest(
                model,
                messages,
                tools,
                toolChoice,
                parallelToolCalls,
                documents,
                params,
                addGenerationPrompt,
                continueFinal,
                templateKwargs,
                f.string("user"));
    }

    static List<Prompt> prompts(JsonFields f, ModelInfo m) {
        JsonNode p = f.node("prompt");
        if (p == null) {
            throw OpenAiException.badRequest("prompt", "'prompt' is required");
        }
        List<Prompt> out = new ArrayList<>();
        if (p.isTextual()) {
            out.add(textPrompt(p));
        } else if (p.isArray()) {
            if (p.isEmpty()) {
                throw OpenAiException.badRequest("prompt", "'prompt' must not be empty");
            }
            JsonNode first = p.get(0);
            if (first.isTextual()) {
                for (JsonNode e : p) {
                    out.add(textPrompt(requireShape(e, e.isTextual())));
                }
            } else if (first.isNumber()) {
                out.add(idsPrompt(f, p, m));
            } else if (first.isArray()) {
                for (JsonNode e : p) {
                    out.add(idsPrompt(f, requireShape(e, e.isArray()), m));
                }
            } else {
                throw shapeError();
            }
        } else {
            throw shapeError();
        }
        return out;
    }

    private static JsonNode requireShape(JsonNode e, boolean ok) {
        if (!ok) {
            throw shapeError();
        }
        return e;
    }

    private static OpenAiException shapeError() {
        return OpenAiException.badRequest("prompt", "'prompt' must be " + PROMPT_SHAPES);
    }

    private static Prompt textPrompt(JsonNode p) {
        if (p.textValue().isEmpty()) {
            throw OpenAiException.badRequest("prompt", "'prompt' must not be empty");
        }
        return Prompt.ofText(p.textValue());
    }

    private static Prompt idsPrompt(JsonFields f, JsonNode array, ModelInfo m) {
        if (array.isEmpty()) {
            throw OpenAiException.badRequest("prompt", "'prompt' must not be empty");
        }
        List<Integer> ids = new ArrayList<>(array.size());
        for (JsonNode e : array) {
            if (!e.isNumber()) {
                throw shapeError();
            }
            long id = f.asLong("prompt", e);
            if (id < 0 || id >= m.vocabSize()) {
                throw OpenAiException.badRequest(
                        "prompt",
                        "Token id " + id + " is out of vocabulary (the vocabulary has " + m.vocabSize() + " tokens)");
            }
            ids.add((int) id);
        }
        return Prompt.ofIds(ids);
    }

    static List<ChatMessage> messages(JsonFields f) {
        JsonNode ms = f.node("messages");
        if (ms == null) {
            throw OpenAiException.badRequest("messages", "'messages' is required");
        }
        if (!ms.isArray()) {
            throw f.typeError("messages", "an array of messages", ms);
        }
        if (ms.isEmpty()) {
            throw OpenAiException.badRequest("messages", "'messages' must contain at least one message");
        }
        List<ChatMessage> out = new ArrayList<>(ms.size());
        for (int i = 0; i < ms.size(); i++) {
            out.add(message(ms.get(i), "messages[" + i + "]"));
        }
        return out;
    }

    private static ChatMessage message(JsonNode node, String at) {
        if (!node.isObject()) {
            throw OpenAiException.badRequest(at, "'" + at + "' must be an object, got " + JsonFields.kind(node));
        }
        JsonFields m = new JsonFields(node, at + ".");
        String role = m.string("role");
        if (role == null) {
            throw OpenAiException.badRequest(at + ".role", "'" + at + ".role' is required");
        }
        if (!ROLES.contains(role)) {
            throw OpenAiException.badRequest(
                    at + ".role",
                    "'" + at + ".role' must be one of system, user, assistant, " + "tool, got '" + role + "'");
        }
        List<Map<String, Object>> toolCalls =
                "assistant".equals(role) ? ToolFields.toolCalls(m, at) : refuseToolCalls(m, at);
        String toolCallId = m.string("tool_call_id");
        String name = m.string("name");
        String text = content(m, at, role);
        return new ChatMessage(role, text, toolCalls, toolCallId, name);
    }

    private static List<Map<String, Object>> refuseToolCalls(JsonFields m, String at) {
        if (m.has("tool_calls")) {
            throw OpenAiException.badRequest(
                    at + ".tool_calls", "'" + at + ".tool_calls' is only allowed on assistant messages");
        }
        return null;
    }

    /** The message's text: a string, or text parts joined with newlines; an assistant's absent content is "". */
    private static String content(JsonFields m, String at, String role) {
        JsonNode content = m.node("content");
        if (content == null) {
            if ("assistant".equals(role)) {
                return "";
            }
            throw OpenAiException.badRequest(at + ".content", "'" + at + ".content' is required");
        }
        if (content.isTextual()) {
            return content.textValue();
        }
        if (!content.isArray()) {
            throw m.typeError("content", "a string or an array of content parts", content);
        }
        StringBuilder text = new StringBuilder();
        for (int j = 0; j < content.size(); j++) {
            String partAt = at + ".content[" + j + "]";
            JsonNode part = content.get(j);
            if (!part.isObject()) {
                throw OpenAiException.badRequest(
                        partAt, "'" + partAt + "' must be an object, got " + JsonFields.kind(part));
            }
            JsonFields pf = new JsonFields(part, partAt + ".");
            String type = pf.string("type");
            if (!"text".equals(type)) {
                throw OpenAiException.notSupported(
                        partAt + ".type",
                        type == null ? "A content part without a type" : "Content part type '" + type + "'");
            }
            String t = pf.string("text");
            if (t == null) {
                throw OpenAiException.badRequest(partAt + ".text", "'" + partAt + ".text' is required");
            }
            if (j > 0) {
                text.append('\n'); // vLLM joins text parts with newlines
            }
            text.append(t);
        }
        return text.toString();
    }
}
