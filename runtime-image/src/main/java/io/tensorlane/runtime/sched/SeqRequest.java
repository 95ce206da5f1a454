package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.SamplingParams;
import java.util.Objects;
import java.util.Set;

/**
 * One sequence to generate.
 *
 * @param id           the request id (for logs; not required to be unique)
 * @param promptIds    the prompt's token ids, at least one
 * @param maxTokens    the most tokens to generate, at least 1
 * @param sampling     temperature 0 is greedy (the GPU's argmax); otherwise sampled on the host, seeded per sequence
 * @param stopTokenIds token ids that end the sequence (reason STOP), besides EOS
 * @param ignoreEos    keep going past the EOS ids
 * @param logprobs     how many top logprobs to return with each token; 0 for none
 * @param constraint   what the sequence may generate (null: anything); owned by the scheduler once submitted
 * @param penalties    penalties and biases the GPU sampler applies ({@link SamplingPenalties#NONE}: none; null reads so)
 * @param promptLogprobs -1: none; k &gt;= 0: the logprob of every prompt token after the first given its prefix, with
 *                     the k most probable alternatives, delivered once before the first token
 *                     ({@link SequenceListener#onPromptLogprobs}; computed without the prefix cache, as vLLM)
 */
public record SeqRequest(
        String id,
        int[] promptIds,
        int maxTokens,
        SamplingParams sampling,
        Set<Integer> stopTokenIds,
        boolean ignoreEos,
        int logprobs,
        TokenConstraint constraint,
        SamplingPenalties penalties,
        int promptLogprobs) {
    public SeqRequest {
        penalties = penalties == null ? SamplingPenalties.NONE : penalties;
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(sampling, "sampling");
        promptIds = Objects.requireNonNull(promptIds, "promptIds").clone();
        stopTokenIds = stopTokenIds == null ? Set.of() : Set.copyOf(stopTokenIds);
        if (promptIds.length == 0) {
            throw new IllegalArgumentException("request " + id + ": empty prompt");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("request " + id + ": max tokens must be >= 1, got " + maxTokens);
        }
        if (logprobs < 0) {
            throw new IllegalArgumentException("request " + id + ": logprobs must be >= 0, got " + logprobs);
        }
        if (promptLogprobs < -1) {
            throw new IllegalArgumentException(
                    "request " + id + ": prompt logprobs must be >= -1, got " + promptLogprobs);
        }
    }

    /** A request without prompt logprobs. */
    public SeqRequest(
            String id,
            int[] promptIds,
            int maxTokens,
            SamplingParams sampling,
            Set<Integer> stopTokenIds,
            boolean ignoreEos,
            int logprobs,
            TokenConstraint constraint,
            SamplingPenalties penalties) {
        this(id, promptIds, maxTokens, sampling, stopTokenIds, ignoreEos, logprobs, constraint, penalties, -1);
    }

    /** The same request with the prompt's logprobs and {@code k} alternatives each ({@code -1}: none). */
    public SeqRequest withPromptLogprobs(int k) {
        return new SeqRequest(
                id, promptIds, maxTokens, sampling, stopTokenIds, ignoreEos, logprobs, constraint, penalties, k);
    }

    /** The ids min_tokens bans until reached: {@code eos} (unless ignore_eos) and the stop ids, as vLLM. */
    Set<Integer> minTokensBans(Set<Integer> eos) {
        if (penalties.minTokens() == 0) {
            return Set.of();
        }
        Set<Integer> ban = new java.util.TreeSet<>(stopTokenIds);
        if (!ignoreEos) {
            ban.addAll(eos);
        }
        return ban;
    }

    /** A request without a constraint. */
    public SeqRequest(
            String id,
            int[] promptIds,
            int maxTokens,
            SamplingParams sampling,
            Set<Integer> stopTokenIds,
            boolean ignoreEos,
            int logprobs) {
        this(id, promptIds, maxTokens, sampling, stopTokenIds, ignoreEos, logprobs, null, null, -1);
    }

    /** A greedy request with no stop ids and no logprobs. */
    public static SeqRequest greedy(String id, int[] promptIds, int maxTokens) {
        return new SeqRequest(id, promptIds, maxTokens, SamplingParams.greedy(), Set.of(), false, 0);
    }

    /** Whether the step must copy this sequence's logits row to the host. */
    boolean needsLogits() {
        return logprobs > 0;
    }
}
