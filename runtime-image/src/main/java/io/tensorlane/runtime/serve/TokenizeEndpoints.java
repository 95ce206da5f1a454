package io.tensorlane.runtime.serve;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.tensorlane.runtime.openai.ChatCompletionRequest;
import io.tensorlane.runtime.openai.ModelInfo;
import io.tensorlane.runtime.openai.OpenAiJson;
import io.tensorlane.runtime.openai.TokenizeRequests;
import io.tensorlane.runtime.text.ModelTokenizer;
import java.util.Map;
import java.util.function.Function;

/**
 * vLLM's {@code POST /tokenize} ({@code {"count", "max_model_len", "tokens", "token_strs"}}) and {@code POST
 * /detokenize} ({@code {"prompt"}}). A chat tokenize renders the messages exactly as chat completions do (the same
 * template, tools and kwargs), so its tokens are the prompt a chat request with the same messages would send.
 */
final class TokenizeEndpoints {
    private final ModelInfo info;
    private final ModelTokenizer tok;
    private final Function<ChatCompletionRequest, String> render;
    private volatile String[] tokenStrings;

    /** @param render a chat request's prompt text through the model's template (answers 400 itself when it cannot) */
    TokenizeEndpoints(ModelInfo info, ModelTokenizer tok, Function<ChatCompletionRequest, String> render) {
        this.info = info;
        this.tok = tok;
        this.render = render;
    }

    /** The tokenize answer's JSON. */
    String tokenize(byte[] body) {
        TokenizeRequests.Tokenize r = TokenizeRequests.parseTokenize(body, info);
        String text = r.prompt() != null ? r.prompt() : render.apply(r.chat());
        int[] ids = tok.encode(text, r.addSpecialTokens());
        ObjectNode o = OpenAiJson.MAPPER.createObjectNode();
        o.put("count", ids.length);
        o.put("max_model_len", info.maxModelLen());
        ArrayNode tokens = o.putArray("tokens");
        for (int id : ids) {
            tokens.add(id);
        }
        if (r.returnTokenStrs()) {
            String[] strs = tokenStrings();
            ArrayNode a = o.putArray("token_strs");
            for (int id : ids) {
                a.add(id < strs.length ? strs[id] : null);
            }
        } else {
            o.putNull("token_strs");
        }
        return OpenAiJson.write(o);
    }

    /** The detokenize answer's JSON: the ids' text, special tokens kept (as transformers' decode by default). */
    String detokenize(byte[] body) {
        int[] ids = TokenizeRequests.parseDetokenize(body, info);
        ObjectNode o = OpenAiJson.MAPPER.createObjectNode();
        o.put("prompt", tok.decode(ids, false));
        return OpenAiJson.write(o);
    }

    /** Id -> token text of tokenizer.json (transformers' convert_ids_to_tokens), built at the first request. */
    private String[] tokenStrings() {
        String[] s = tokenStrings;
        if (s == null) {
            int n = 0;
            for (int id : tok.vocabulary().values()) {
                n = Math.max(n, id + 1);
            }
            s = new String[n];
            for (Map.Entry<String, Integer> e : tok.vocabulary().entrySet()) {
                s[e.getValue()] = e.getKey();
            }
            tokenStrings = s;
        }
        return s;
    }
}
