package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tool-related fields of a chat request, read into what the chat template receives (vLLM's shapes):
 *
 * <ul>
 *   <li>{@code tools}: the function schemas, each {@code {"type": "function", "function": {"name": ..., ...}}}, passed
 *       to the template as sent; {@code tool_choice} ({@link ToolChoice}) says what becomes of them.
 *   <li>an assistant message's {@code tool_calls}: {@code function.arguments} is parsed from its JSON string into an
 *       object (null or "" become {}), as vLLM's {@code _postprocess_messages} does; an empty list is dropped.
 *   <li>{@code documents}: a list of objects, passed to the template as sent.
 *   <li>{@code chat_template} in the request or in {@code chat_template_kwargs}: refused as vLLM refuses it without
 *       {@code --trust-request-chat-template}.
 * </ul>
 */
final class ToolFields {
    private static final TypeReference<Map<String, Object>> OBJECT = new TypeReference<>() {};

    private ToolFields() {}

    /** The request's tools for the template: null when absent (None), else the list as sent. */
    static List<Map<String, Object>> tools(JsonFields f) {
        for (String legacy : List.of("functions", "function_call")) {
            if (f.has(legacy)) {
                throw OpenAiException.notSupported(legacy, "Function calling ('" + legacy + "'; use 'tools')");
            }
        }
        JsonNode tools = f.node("tools");
        if (tools == null) {
            return null;
        }
        if (!tools.isArray()) {
            throw f.typeError("tools", "an array", tools);
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < tools.size(); i++) {
            String at = "tools[" + i + "]";
            JsonNode t = tools.get(i);
            JsonFields tf = object(t, at);
            String type = tf.string("type");
            if (!"function".equals(type)) {
                throw OpenAiException.badRequest(at + ".type", "'" + at + ".type' must be \"function\"");
            }
            JsonFields fn = object(tf.node("function"), at + ".function");
            if (fn.string("name") == null) {
                throw OpenAiException.badRequest(at + ".function.name", "'" + at + ".function.name' is required");
            }
            JsonNode params = fn.node("parameters");
            if (params != null && !params.isObject()) {
                throw fn.typeError("parameters", "an object (a JSON schema)", params);
            }
            out.add(OpenAiJson.MAPPER.convertValue(t, OBJECT));
        }
        return out;
    }

    /**
     * The request's tool_choice ({@link ToolChoice}): "none", "auto", "required" or {@code {"type": "function",
     * "function": {"name": N}}} with N one of {@code tools}; anything but "none" needs tools.
     */
    static ToolChoice toolChoice(JsonFields f, List<Map<String, Object>> tools) {
        JsonNode c = f.node("tool_choice");
        boolean hasTools = tools != null && !tools.isEmpty();
        if (c == null) {
            return hasTools ? ToolChoice.AUTO : ToolChoice.NONE;
        }
        ToolChoice choice;
        if (c.isTextual()) {
            switch (c.textValue()) {
                case "none":
                    return ToolChoice.NONE;
                case "auto":
                    choice = ToolChoice.AUTO;
                    break;
                case "required":
                    choice = ToolChoice.REQUIRED;
                    break;
                default:
                    throw OpenAiException.badRequest(
                            "tool_choice",
                            "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", "
                                    + "\"function\": {\"name\": ...}}, got '" + c.textValue() + "'");
            }
        } else if (c.isObject()) {
            JsonFields cf = new JsonFields(c, "tool_choice.");
            if (!"function".equals(cf.string("type"))) {
                throw OpenAiException.badRequest("tool_choice.type", "'tool_choice.type' must be \"function\"");
            }
            JsonFields fn = object(cf.node("function"), "tool_choice.function");
            String name = fn.string("name");
            if (name == null) {
                throw OpenAiException.badRequest(
                        "tool_choice.function.name", "'tool_choice.function.name' is required");
            }
            if (hasTools && function(tools, name) == null) {
                throw OpenAiException.badRequest(
                        "tool_choice.function.name",
                        "Tool '" + name + "' has not been passed in `tools`: 'tool_choice' names a function the "
                                + "request does not define");
            }
            choice = new ToolChoice(ToolChoice.Mode.NAMED, name);
        } else {
            throw f.typeError("tool_choice", "a string or an object", c);
        }
        if (!hasTools) {
            throw OpenAiException.badRequest(
                    "tool_choice", "When using `tool_choice`, `tools` must be set (with at least one function).");
        }
        return choice;
    }

    /** The {@code function} object of the tool named {@code name}, or null. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> function(List<Map<String, Object>> tools, String name) {
        if (tools == null) return null;
        for (Map<String, Object> t : tools) {
            Map<String, Object> fn = (Map<String, Object>) t.get("function");
            if (fn != null && name.equals(fn.get("name"))) return fn;
        }
        return null;
    }

    /** The request's documents: null when absent, else a list of objects as sent. */
    static List<Map<String, Object>> documents(JsonFields f) {
        JsonNode docs = f.node("documents");
        if (docs == null) {
            return null;
        }
        if (!docs.isArray()) {
            throw f.typeError("documents", "an array of objects", docs);
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (int i = 0; i < docs.size(); i++) {
            object(docs.get(i), "documents[" + i + "]");
            out.add(OpenAiJson.MAPPER.convertValue(docs.get(i), OBJECT));
        }
        return out;
    }

    /** vLLM's refusal of a template sent with the request (it runs only with --trust-request-chat-template). */
    static void refuseRequestTemplate(JsonFields f) {
        JsonFields kwargs = f.object("chat_template_kwargs");
        if (f.has("chat_template") || (kwargs != null && kwargs.has("chat_template"))) {
            throw OpenAiException.badRequest(
                    "chat_template",
                    "Chat template is passed with request, but --trust-request-chat-template is not set. "
                            + "Refused request with untrusted chat template.");
        }
    }

    /**
     * An assistant message's tool_calls as the template receives them, or null (absent, null or empty).
     *
     * @param at the message's path, e.g. {@code messages[1]}
     */
    static List<Map<String, Object>> toolCalls(JsonFields m, String at) {
        JsonNode calls = m.node("tool_calls");
        if (calls == null) {
            return null;
        }
        if (!calls.isArray()) {
            throw m.typeError("tool_calls", "an array", calls);
        }
        if (calls.isEmpty()) {
            return null; // vLLM drops an empty list so that templates take the plain assistant path
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (int j = 0; j < calls.size(); j++) {
            String callAt = at + ".tool_calls[" + j + "]";
            JsonFields c = object(calls.get(j), callAt);
            c.string("id");
            String type = c.string("type");
            if (type != null && !"function".equals(type)) {
                throw OpenAiException.badRequest(callAt + ".type", "'" + callAt + ".type' must be \"function\"");
            }
            JsonFields fn = object(c.node("function"), callAt + ".function");
            if (fn.string("name") == null) {
                throw OpenAiException.badRequest(
                        callAt + ".function.name", "'" + callAt + ".function.name' is required");
            }
            Map<String, Object> call = OpenAiJson.MAPPER.convertValue(calls.get(j), OBJECT);
            @SuppressWarnings("unchecked")
            Map<String, Object> function = new LinkedHashMap<>((Map<String, Object>) call.get("function"));
            function.put("arguments", arguments(fn.node("arguments"), callAt + ".function.arguments"));
            call.put("function", function);
            out.add(call);
        }
        return out;
    }

    /** OpenAI sends arguments as a JSON string; templates get the parsed object ({} for null or ""). */
    private static Object arguments(JsonNode a, String at) {
        if (a == null || (a.isTextual() && a.textValue().isEmpty())) {
            return new LinkedHashMap<String, Object>();
        }
        if (a.isObject() || a.isArray()) {
            return OpenAiJson.MAPPER.convertValue(a, Object.class);
        }
        if (!a.isTextual()) {
            throw OpenAiException.badRequest(
                    at, "'" + at + "' must be a JSON string (or an object), got " + JsonFields.kind(a));
        }
        try {
            return OpenAiJson.MAPPER.readValue(a.textValue(), Object.class);
        } catch (JsonProcessingException e) {
            throw OpenAiException.badRequest(at, "'" + at + "' is not valid JSON: " + e.getOriginalMessage());
        }
    }

    private static JsonFields object(JsonNode n, String at) {
        if (n == null || !n.isObject()) {
            throw OpenAiException.badRequest(at, "'" + at + "' must be an object, got " + JsonFields.kind(n));
        }
        return new JsonFields(n, at + ".");
    }
}
