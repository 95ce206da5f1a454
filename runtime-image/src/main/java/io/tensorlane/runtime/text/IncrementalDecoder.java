package io.tensorlane.runtime.text;

import java.util.Arrays;

/**
 * Streaming detokenization of one sequence: {@link #append(int)} returns the text the new token adds.
 *
 * <p>The algorithm of Hugging Face text-generation-inference and vLLM's detokenizer: decode a short window of ids
 * twice, {@code [prefixOffset, readOffset)} (text already emitted) and {@code [prefixOffset, end)}, and emit the
 * difference only when the longer text does not end with U+FFFD, i.e. when the last token does not stop inside a UTF-8
 * sequence whose remaining bytes come with later tokens. Decoding a window with some context rather than the token alone
 * keeps the tokenizer's context-dependent output (SentencePiece's leading-space rule, byte-level merges) identical to a
 * full decode. The prompt's last five tokens start the window. Not thread-safe (one per sequence).
 */
public final class IncrementalDecoder {
    /** Tokens of context before the first generated token, as vLLM's INITIAL_INCREMENTAL_DETOKENIZATION_OFFSET. */
    static final int INITIAL_CONTEXT = 5;

    /** Decodes {@code ids[from, to)}. */
    @FunctionalInterface
    public interface RangeDecoder {
        String decode(int[] ids, int from, int to);
    }

    private final RangeDecoder decoder;
    private int[] ids;
    private int size;
    private int prefixOffset;
    private int readOffset;

    IncrementalDecoder(RangeDecoder decoder, int[] promptIds) {
        this.decoder = decoder;
        this.ids = Arrays.copyOf(promptIds, Math.max(16, promptIds.length * 2));
        this.size = promptIds.length;
        this.prefixOffset = Math.max(0, size - INITIAL_CONTEXT);
        this.readOffset = size;
    }

    /** Appends a generated token and returns the text it completes; "" while a character is still incomplete. */
    public String append(int token) {
        if (size == ids.length) {
            ids = Arrays.copyOf(ids, size * 2);
        }
        ids[size++] = token;
        String prefixText = decoder.decode(ids, prefixOffset, readOffset);
        String newText = decoder.decode(ids, prefixOffset, size);
        if (newText.length() > prefixText.length() && !newText.endsWith("\uFFFD")) {
            prefixOffset = readOffset;
            readOffset = size;
            return delta(prefixText, newText);
        }
        return "";
    }

    /**
     * Text held back at the end of the sequence (bytes that never completed a character come out as U+FFFD, as in a full
     * decode); "" when nothing is pending. Call once when the sequence finishes.
     */
    public String flush() {
        if (readOffset == size) {
            return "";
        }
        String prefixText = decoder.decode(ids, prefixOffset, readOffset);
        String newText = decoder.decode(ids, prefixOffset, size);
        prefixOffset = readOffset;
        readOffset = size;
        return newText.length() > prefixText.length() ? delta(prefixText, newText) : "";
    }

    /** Generated and prompt ids so far. */
    public int[] ids() {
        return Arrays.copyOf(ids, size);
    }

    private static String delta(String prefixText, String newText) {
        // Normally prefixText is a prefix of newText; if a tokenizer rewrites earlier text, the tail is still the best
        // guess.
        return newText.substring(prefixText.length());
    }
}
