package io.tensorlane.runtime.serve;

import io.tensorlane.runtime.openai.CompletionResponses;
import io.tensorlane.runtime.openai.TokenLogprob;
import io.tensorlane.runtime.text.IncrementalDecoder;
import io.tensorlane.runtime.text.ModelTokenizer;
import io.tensorlane.runtime.text.TopLogprobs;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The texts behind logprobs: each token's own text (special tokens kept, as vLLM lists them), decoded once per id and
 * kept, so that a prompt's logprobs (a token and k alternatives per prompt token) cost no tokenizer calls on the
 * scheduler thread once the ids were seen; and where each prompt token starts in the prompt's text. Thread-safe.
 */
final class TokenTexts {
    private final ModelTokenizer tok;
    private final AtomicReferenceArray<String> texts;

    /** @param vocab the model's vocabulary size (ids from 0 to vocab - 1 are kept) */
    TokenTexts(ModelTokenizer tok, int vocab) {
        this.tok = tok;
        this.texts = new AtomicReferenceArray<>(vocab);
    }

    /** Token {@code id}'s own text. */
    String text(int id) {
        if (id < 0 || id >= texts.length()) {
            return tok.decode(new int[] {id}, false);
        }
        String t = texts.get(id);
        if (t == null) {
            t = tok.decode(new int[] {id}, false);
            texts.set(id, t);
        }
        return t;
    }

    /** A step's logprobs as the API lists them: the chosen token's and up to {@code k} alternatives. */
    TokenLogprob map(int token, TopLogprobs lp, int k) {
        List<TokenLogprob.Alt> top = new ArrayList<>();
        for (int i = 0; i < Math.min(k, lp.topIds().length); i++) {
            top.add(new TokenLogprob.Alt(lp.topIds()[i], text(lp.topIds()[i]), lp.topLogprobs()[i]));
        }
        return new TokenLogprob(token, text(token), lp.logprob(), top);
    }

    /**
     * Where each of {@code ids} starts in their decoded text, in code points: the length of the text the tokens before
     * it decode to, read off the streaming detokenizer (a token inside a character that later tokens complete starts
     * where that character does). Linear in the prompt; call it off the scheduler thread.
     */
    int[] offsets(int[] ids, boolean skipSpecialTokens) {
        IncrementalDecoder d = tok.newDecoder(new int[0], skipSpecialTokens);
        int[] out = new int[ids.length];
        int at = 0;
        for (int i = 0; i < ids.length; i++) {
            out[i] = at;
            String piece = d.append(ids[i]);
            at += piece.codePointCount(0, piece.length());
        }
        return out;
    }

    /**
     * The echo of {@code p} with its logprobs: the first token unscored, token {@code i} (i &gt; 0) scored by
     * {@code lps[i - 1]} with {@code k} alternatives. Offsets past the end of the text (a prompt whose text is not its
     * tokens' decoded text) are kept at its end.
     */
    CompletionResponses.Echo echo(EchoedPrompt p, List<TopLogprobs> lps, int k) {
        int[] ids = p.ids();
        if (lps.size() != ids.length - 1) {
            throw new IllegalStateException(lps.size() + " prompt logprobs for a prompt of " + ids.length + " tokens");
        }
        List<TokenLogprob> tokens = new ArrayList<>(ids.length);
        tokens.add(TokenLogprob.unscored(ids[0], text(ids[0])));
        for (int i = 1; i < ids.length; i++) {
            tokens.add(map(ids[i], lps.get(i - 1), k));
        }
        int end = p.text().codePointCount(0, p.text().length());
        int[] offsets = p.offsets().clone();
        for (int i = 0; i < offsets.length; i++) {
            offsets[i] = Math.min(offsets[i], end);
        }
        return new CompletionResponses.Echo(p.text(), tokens, offsets);
    }

    /** The echo of {@code p} without logprobs. */
    static CompletionResponses.Echo echo(EchoedPrompt p) {
        return new CompletionResponses.Echo(p.text(), null, null);
    }
}
