package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.UUID;

/** What completions and chat responses share: ids, the header fields, the usage chunk, the /v1/models answer. */
public final class Responses {
    /** vLLM's floor for a logprob that JSON cannot carry (-inf) or that is NaN. */
    static final double MIN_LOGPROB = -9999.0;

    private Responses() {}

    /** {@code cmpl-} and 32 hex digits, as vLLM's completion ids. */
    public static String completionId() {
        return "cmpl-" + hex();
    }

    /** {@code chatcmpl-} and 32 hex digits, as vLLM's chat completion ids. */
    public static String chatId() {
        return "chatcmpl-" + hex();
    }

    private static String hex() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    /** Epoch seconds for {@code created}. */
    public static long now() {
        return System.currentTimeMillis() / 1000;
    }

    static ObjectNode header(String id, String object, long created, String model) {
        ObjectNode n = OpenAiJson.MAPPER.createObjectNode();
        n.put("id", id);
        n.put("object", object);
        n.put("created", created);
        n.put("model", model);
        return n;
    }

    /**
     * The last chunk before [DONE] when {@code stream_options.include_usage}: {@code choices: []} and the usage.
     *
     * @param object {@code text_completion} or {@code chat.completion.chunk}
     */
    public static ObjectNode usageChunk(String id, String object, long created, String model, Usage usage) {
        ObjectNode n = header(id, object, created, model);
        n.putArray("choices");
        n.set("usage", usage.toJsonNode());
        return n;
    }

    static double logprob(float lp) {
        return Float.isNaN(lp) ? MIN_LOGPROB : Math.max(lp, MIN_LOGPROB);
    }

    /** vLLM's {@code stop_reason}: the matched stop string, stop token id, or null (EOS, length). */
    static void putStopReason(ObjectNode choice, Object stopReason) {
        if (stopReason == null) {
            choice.putNull("stop_reason");
        } else if (stopReason instanceof Integer i) {
            choice.put("stop_reason", i);
        } else {
            choice.put("stop_reason", stopReason.toString());
        }
    }

    /** {@code GET /v1/models}: {@code {"object": "list", "data": [model]}}. */
    public static ObjectNode modelList(ModelInfo m) {
        ObjectNode n = OpenAiJson.MAPPER.createObjectNode();
        n.put("object", "list");
        n.putArray("data").add(model(m));
        return n;
    }

    /** One model card ({@code GET /v1/models/{id}} answers it alone). */
    public static ObjectNode model(ModelInfo m) {
        ObjectNode n = OpenAiJson.MAPPER.createObjectNode();
        n.put("id", m.id());
        n.put("object", "model");
        n.put("created", m.created());
        n.put("owned_by", "tensorlane");
        n.put("root", m.id());
        n.putNull("parent");
        n.put("max_model_len", m.maxModelLen());
        return n;
    }
}
