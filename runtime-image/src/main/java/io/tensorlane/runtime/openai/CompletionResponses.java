package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/** {@code /v1/completions} answers: the whole response, streamed {@code text_completion} chunks, their logprobs. */
public final class CompletionResponses {
    public static final String OBJECT = "text_completion";

    private CompletionResponses() {}

    /**
     * The echoed prompt that starts a choice's text ({@code echo: true}).
     *
     * @param text the prompt's text
     * @param tokens with {@code logprobs}: every prompt token, the first {@linkplain TokenLogprob#unscored unscored};
     *     null without
     * @param offsets where each of {@code tokens} starts in {@code text}, in code points (null without logprobs)
     */
    public record Echo(String text, List<TokenLogprob> tokens, int[] offsets) {
        public Echo {
            if ((tokens == null) != (offsets == null) || (tokens != null && tokens.size() != offsets.length)) {
                throw new IllegalArgumentException("an echo needs an offset per token");
            }
            tokens = tokens == null ? null : List.copyOf(tokens);
            offsets = offsets == null ? null : offsets.clone();
        }

        /** The echo's length in code points (as Python's len): where the generated text starts. */
        public int length() {
            return text.codePointCount(0, text.length());
        }
    }

    /**
     * One finished choice.
     *
     * @param text the whole text (the echoed prompt's first when {@code echo} is not null)
     * @param finishReason {@code stop} or {@code length}
     * @param stopReason the matched stop string or stop token id, or null
     * @param logprobs per generated token, or null when the request asked for none
     * @param echo the echoed prompt (with its tokens' logprobs when asked for), or null
     */
    public record Choice(
            int index, String text, String finishReason, Object stopReason, List<TokenLogprob> logprobs, Echo echo) {
        /** A choice without echo. */
        public Choice(int index, String text, String finishReason, Object stopReason, List<TokenLogprob> logprobs) {
            this(index, text, finishReason, stopReason, logprobs, null);
        }
    }

    public static ObjectNode response(String id, long created, String model, List<Choice> choices, Usage usage) {
        ObjectNode n = Responses.header(id, OBJECT, created, model);
        ArrayNode cs = n.putArray("choices");
        for (Choice c : choices) {
            Echo e = c.echo();
            ObjectNode lp = null;
            if (e != null && e.tokens() != null) { // the prompt's tokens first, then the generated ones after its text
                lp = logprobs(e.tokens(), e.offsets());
                append(lp, c.logprobs() == null ? List.of() : c.logprobs(), e.length());
            } else if (c.logprobs() != null) {
                lp = logprobs(c.logprobs(), 0);
            }
            cs.add(choice(c.index(), c.text(), lp, c.finishReason(), c.stopReason()));
        }
        n.set("usage", usage.toJsonNode());
        return n;
    }

    /** The streamed chunk that starts an echoing choice: the prompt's text (and its tokens' logprobs when asked). */
    public static ObjectNode echoChunk(String id, long created, String model, int index, Echo echo) {
        ObjectNode n = Responses.header(id, OBJECT, created, model);
        ObjectNode lp = echo.tokens() == null ? null : logprobs(echo.tokens(), echo.offsets());
        n.putArray("choices").add(choice(index, echo.text(), lp, null, null));
        return n;
    }

    /**
     * One streamed piece of one choice: its new text (and that text's tokens' logprobs), the finish reason on the last.
     *
     * @param textOffset characters of this choice's text sent before (the logprobs' {@code text_offset} continues it)
     */
    public static ObjectNode chunk(
            String id,
            long created,
            String model,
            int index,
            String text,
            List<TokenLogprob> logprobs,
            int textOffset,
            String finishReason,
            Object stopReason) {
        ObjectNode n = Responses.header(id, OBJECT, created, model);
        ObjectNode lp = logprobs == null ? null : logprobs(logprobs, textOffset);
        n.putArray("choices").add(choice(index, text, lp, finishReason, stopReason));
        return n;
    }

    private static ObjectNode choice(
            int index, String text, ObjectNode logprobs, String finishReason, Object stopReason) {
        ObjectNode c = OpenAiJson.MAPPER.createObjectNode();
        c.put("index", index);
        c.put("text", text);
        if (logprobs == null) {
            c.putNull("logprobs");
        } else {
            c.set("logprobs", logprobs);
        }
        c.put("finish_reason", finishReason);
        Responses.putStopReason(c, stopReason);
        return c;
    }

    /**
     * Legacy completions logprobs: parallel arrays {@code tokens}, {@code token_logprobs}, {@code top_logprobs} (per
     * token a map of token text to logprob: the chosen token and the alternatives, as vLLM does; {@code null} for an
     * {@linkplain TokenLogprob#unscored unscored} token, whose logprob is {@code null} too) and {@code text_offset}
     * (each token's start in the choice's text, counted in code points as Python's len: from {@code textOffset} on,
     * each token's text after the one before).
     */
    public static ObjectNode logprobs(List<TokenLogprob> tokens, int textOffset) {
        ObjectNode lp = empty();
        append(lp, tokens, textOffset);
        return lp;
    }

    /** The same with each token's offset given ({@code offsets[i]} for {@code tokens[i]}). */
    static ObjectNode logprobs(List<TokenLogprob> tokens, int[] offsets) {
        ObjectNode lp = empty();
        for (int i = 0; i < tokens.size(); i++) {
            put(lp, tokens.get(i), offsets[i]);
        }
        return lp;
    }

    private static ObjectNode empty() {
        ObjectNode lp = OpenAiJson.MAPPER.createObjectNode();
        lp.putArray("text_offset");
        lp.putArray("token_logprobs");
        lp.putArray("tokens");
        lp.putArray("top_logprobs");
        return lp;
    }

    private static void append(ObjectNode lp, List<TokenLogprob> tokens, int textOffset) {
        int offset = textOffset;
        for (TokenLogprob t : tokens) {
            put(lp, t, offset);
            offset += t.text().codePointCount(0, t.text().length());
        }
    }

    private static void put(ObjectNode lp, TokenLogprob t, int offset) {
        ((ArrayNode) lp.get("text_offset")).add(offset);
        ((ArrayNode) lp.get("tokens")).add(t.text());
        ArrayNode values = (ArrayNode) lp.get("token_logprobs");
        ArrayNode tops = (ArrayNode) lp.get("top_logprobs");
        if (!t.scored()) {
            values.addNull();
            tops.addNull();
            return;
        }
        values.add(Responses.logprob(t.logprob()));
        ObjectNode top = tops.addObject();
        top.put(t.text(), Responses.logprob(t.logprob()));
        for (TokenLogprob.Alt a : t.top()) {
            if (!top.has(a.text())) {
                top.put(a.text(), Responses.logprob(a.logprob()));
            }
        }
    }
}
