package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** {@code /v1/chat/completions} answers: the whole response, {@code chat.completion.chunk}s, chat logprobs. */
public final class ChatResponses {
    public static final String OBJECT = "chat.completion";
    public static final String CHUNK_OBJECT = "chat.completion.chunk";

    private ChatResponses() {}

    /**
     * One finished choice; see {@link CompletionResponses.Choice}. With tool calls, an empty content is sent as null (as
     * OpenAI does).
     */
    public record Choice(
            int index,
            String content,
            List<ToolCall> toolCalls,
            String finishReason,
            Object stopReason,
            List<TokenLogprob> logprobs) {
        public Choice {
            toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
        }

        public Choice(int index, String content, String finishReason, Object stopReason, List<TokenLogprob> logprobs) {
            this(index, content, List.of(), finishReason, stopReason, logprobs);
        }
    }

    /** A call of {@code message.tool_calls}: {@code {"id", "type": "function", "function": {"name", "arguments"}}}. */
    public record ToolCall(String id, String name, String arguments) {}

    /**
     * A piece of a streamed call ({@code delta.tool_calls[i]}): {@code index}; the first piece of a call has its
     * {@code id}, {@code type: "function"} and {@code function.name}; every piece has {@code function.arguments} (text to
     * append). id and name are null in the later pieces.
     */
    public record ToolCallPiece(int index, String id, String name, String arguments) {}

    public static ObjectNode response(String id, long created, String model, List<Choice> choices, Usage usage) {
        ObjectNode n = Responses.header(id, OBJECT, created, model);
        ArrayNode cs = n.putArray("choices");
        for (Choice c : choices) {
            ObjectNode choice = cs.addObject();
            choice.put("index", c.index());
            ObjectNode message = choice.putObject("message");
            message.put("role", "assistant");
            if (c.toolCalls().isEmpty() || !c.content().isEmpty()) {
                message.put("content", c.content());
            } else {
                message.putNull("content");
            }
            if (!c.toolCalls().isEmpty()) {
                ArrayNode calls = message.putArray("tool_calls");
                for (ToolCall t : c.toolCalls()) {
                    ObjectNode call = calls.addObject();
                    call.put("id", t.id());
                    call.put("type", "function");
                    ObjectNode fn = call.putObject("function");
                    fn.put("name", t.name());
                    fn.put("arguments", t.arguments());
                }
            }
            putLogprobs(choice, c.logprobs());
            choice.put("finish_reason", c.finishReason());
            Responses.putStopReason(choice, c.stopReason());
        }
        n.set("usage", usage.toJsonNode());
        return n;
    }

    /** The first chunk of each choice: {@code delta: {"role": "assistant", "content": ""}}. */
    public static ObjectNode roleChunk(String id, long created, String model, int index) {
        ObjectNode n = Responses.header(id, CHUNK_OBJECT, created, model);
        ObjectNode choice = n.putArray("choices").addObject();
        choice.put("index", index);
        ObjectNode delta = choice.putObject("delta");
        delta.put("role", "assistant");
        delta.put("content", "");
        choice.putNull("logprobs");
        choice.putNull("finish_reason");
        return n;
    }

    /**
     * A content delta of one choice; the last one carries {@code finishReason} (its content may be empty or null: null
     * sends {@code delta: {}}).
     */
    public static ObjectNode chunk(
            String id,
            long created,
            String model,
            int index,
            String content,
            List<TokenLogprob> logprobs,
            String finishReason,
            Object stopReason) {
        return chunk(id, created, model, index, content, List.of(), logprobs, finishReason, stopReason);
    }

    /**
     * A delta of one choice with tool-call pieces ({@link ToolCallPiece}) after its content; an empty content is left
     * out when there are pieces.
     */
    public static ObjectNode chunk(
            String id,
            long created,
            String model,
            int index,
            String content,
            List<ToolCallPiece> calls,
            List<TokenLogprob> logprobs,
            String finishReason,
            Object stopReason) {
        ObjectNode n = Responses.header(id, CHUNK_OBJECT, created, model);
        ObjectNode choice = n.putArray("choices").addObject();
        choice.put("index", index);
        ObjectNode delta = choice.putObject("delta");
        if (content != null && !(content.isEmpty() && !calls.isEmpty())) {
            delta.put("content", content);
        }
        if (!calls.isEmpty()) {
            ArrayNode tc = delta.putArray("tool_calls");
            for (ToolCallPiece p : calls) {
                ObjectNode call = tc.addObject();
                call.put("index", p.index());
                if (p.id() != null) {
                    call.put("id", p.id());
                    call.put("type", "function");
                }
                ObjectNode fn = call.putObject("function");
                if (p.name() != null) {
                    fn.put("name", p.name());
                }
                fn.put("arguments", p.arguments());
            }
        }
        putLogprobs(choice, logprobs);
        choice.put("finish_reason", finishReason);
        if (finishReason != null) {
            Responses.putStopReason(choice, stopReason);
        }
        return n;
    }

    private static void putLogprobs(ObjectNode choice, List<TokenLogprob> logprobs) {
        if (logprobs == null) {
            choice.putNull("logprobs");
        } else {
            choice.set("logprobs", logprobs(logprobs));
        }
    }

    /**
     * Chat logprobs: {@code {"content": [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}}, bytes the
     * token text's UTF-8 bytes as numbers 0..255.
     */
    public static ObjectNode logprobs(List<TokenLogprob> tokens) {
        ObjectNode lp = OpenAiJson.MAPPER.createObjectNode();
        ArrayNode content = lp.putArray("content");
        for (TokenLogprob t : tokens) {
            ObjectNode entry = entry(content.addObject(), t.text(), t.logprob());
            ArrayNode top = entry.putArray("top_logprobs");
            for (TokenLogprob.Alt a : t.top()) {
                entry(top.addObject(), a.text(), a.logprob());
            }
        }
        return lp;
    }

    private static ObjectNode entry(ObjectNode n, String token, float logprob) {
        n.put("token", token);
        n.put("logprob", Responses.logprob(logprob));
        ArrayNode bytes = n.putArray("bytes");
        for (byte b : token.getBytes(StandardCharsets.UTF_8)) {
            bytes.add(b & 0xff);
        }
        return n;
    }
}
