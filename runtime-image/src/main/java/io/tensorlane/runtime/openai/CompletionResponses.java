package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/** {@code /v1/completions} answers: the whole response, streamed {@code text_completion} chunks, their logprobs. */
public final class CompletionResponses {
    public static final String OBJECT = "text_completion";

    private CompletionResponses() {}

    /**
     * One finished choice.
     *
     * @param finishReason {@code stop} or {@code length}
     * @param stopReason the matched stop string or stop token id, or null
     * @param logprobs per generated token, or null when the request asked for none
     */
    public record Choice(int index, String text, String finishReason, Object stopReason, List<TokenLogprob> logprobs) {}

    public static ObjectNode response(String id, long created, String model, List<Choice> choices, Usage usage) {
        ObjectNode n = Responses.header(id, OBJECT, created, model);
        ArrayNode cs = n.putArray("choices");
        for (Choice c : choices) {
            cs.add(choice(c.index(), c.text(), c.logprobs(), 0, c.finishReason(), c.stopReason()));
        }
        n.set("usage", usage.toJsonNode());
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
        n.putArray("choices").add(choice(index, text, logprobs, textOffset, finishReason, stopReason));
        return n;
    }

    private static ObjectNode choice(
            int index,
            String text,
            List<TokenLogprob> logprobs,
            int textOffset,
            String finishReason,
            Object stopReason) {
        ObjectNode c = OpenAiJson.MAPPER.createObjectNode();
        c.put("index", index);
        c.put("text", text);
        if (logprobs == null) {
            c.putNull("logprobs");
        } else {
            c.set("logprobs", logprobs(logprobs, textOffset));
        }
        c.put("finish_reason", finishReason);
        Responses.putStopReason(c, stopReason);
        return c;
    }

    /**
     * Legacy completions logprobs: parallel arrays {@code tokens}, {@code token_logprobs}, {@code top_logprobs} (per
     * token a map of token text to logprob: the alternatives and the chosen token, as vLLM does) and
     * {@code text_offset} (each token's start in the choice's text, counted in code points as Python's len).
     */
    public static ObjectNode logprobs(List<TokenLogprob> tokens, int textOffset) {
        ObjectNode lp = OpenAiJson.MAPPER.createObjectNode();
        ArrayNode offsets = lp.putArray("text_offset");
        ArrayNode values = lp.putArray("token_logprobs");
        ArrayNode texts = lp.putArray("tokens");
        ArrayNode tops = lp.putArray("top_logprobs");
        int offset = textOffset;
        for (TokenLogprob t : tokens) {
            offsets.add(offset);
            offset += t.text().codePointCount(0, t.text().length());
            values.add(Responses.logprob(t.logprob()));
            texts.add(t.text());
            ObjectNode top = tops.addObject();
            top.put(t.text(), Responses.logprob(t.logprob()));
            for (TokenLogprob.Alt a : t.top()) {
                if (!top.has(a.text())) {
                    top.put(a.text(), Responses.logprob(a.logprob()));
                }
            }
        }
        return lp;
    }
}
