package io.tensorlane.runtime.sched;

import java.util.Map;
import java.util.TreeMap;

/**
 * A sequence's penalties and biases, applied by the GPU sampler to its logits before drawing (tl_sample.cuh; the host
 * reference is {@link PenaltyReference}).
 *
 * @param presence   OpenAI's presence_penalty: subtracted from the logit of every id generated at least once
 * @param frequency  OpenAI's frequency_penalty: subtracted once per time the id was generated
 * @param repetition vLLM/transformers' repetition_penalty over prompt and generated ids: a positive logit is divided by
 *                   it, another multiplied; 1 is off, must be &gt; 0
 * @param logitBias  id -&gt; bias added to its logit (OpenAI's logit_bias), never null
 * @param minTokens  EOS and stop ids are banned until this many tokens were generated; 0 is off
 * @param badWords   vLLM's bad_words as token id sequences: the last id of each is banned whenever the generated tokens
 *                   end with the ones before it (a one-id sequence is always banned); never null
 */
public record SamplingPenalties(
        float presence,
        float frequency,
        float repetition,
        Map<Integer, Float> logitBias,
        int minTokens,
        java.util.List<int[]> badWords) {
    /** No penalty, no bias. */
    public static final SamplingPenalties NONE = new SamplingPenalties(0f, 0f, 1f, Map.of(), 0);

    /** Without bad words. */
    public SamplingPenalties(
            float presence, float frequency, float repetition, Map<Integer, Float> logitBias, int minTokens) {
        this(presence, frequency, repetition, logitBias, minTokens, java.util.List.of());
    }

    public SamplingPenalties {
        if (!Float.isFinite(presence) || !Float.isFinite(frequency)) {
            throw new IllegalArgumentException("presence and frequency penalties must be finite");
        }
        if (!(repetition > 0) || !Float.isFinite(repetition)) {
            throw new IllegalArgumentException("repetition penalty must be finite and > 0, got " + repetition);
        }
        if (minTokens < 0) {
            throw new IllegalArgumentException("min tokens must be >= 0, got " + minTokens);
        }
        logitBias = logitBias == null ? Map.of() : Map.copyOf(new TreeMap<>(logitBias));
        badWords = badWords == null ? java.util.List.of() : java.util.List.copyOf(badWords);
        for (int[] w : badWords) {
            if (w.length == 0) {
                throw new IllegalArgumentException("a bad word without tokens");
            }
        }
        for (Map.Entry<Integer, Float> e : logitBias.entrySet()) {
            if (e.getKey() < 0 || !Float.isFinite(e.getValue())) {
                throw new IllegalArgumentException("logit bias " + e.getKey() + " -> " + e.getValue());
            }
        }
    }

    /** Whether the sampler's count pairs are needed (some penalty over seen ids is on). */
    boolean countsTokens() {
        return presence != 0f || frequency != 0f || repetition != 1f;
    }

    /** Whether nothing is changed: the row samples as without penalties. */
    public boolean isNone() {
        return !countsTokens() && logitBias.isEmpty() && minTokens == 0 && badWords.isEmpty();
    }
}
