package io.tensorlane.runtime.sched;

import io.tensorlane.runtime.text.Sampler;
import io.tensorlane.runtime.text.TopLogprobs;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Prompt logprobs (completions' {@code echo} with {@code logprobs}, vLLM's {@code prompt_logprobs}): the logprob of
 * every prompt token after the first given the tokens before it, with the request's k alternatives.
 *
 * <p>Prefill normally asks the executor for one logits row per sequence, its prompt's last token's (or none for a chunk
 * that does not end the prompt: {@link StepBatch.Logits#LAST}/{@link StepBatch.Logits#NONE}), and the lm_head runs on
 * the listed rows only. A sequence that collects prompt logprobs instead asks for every token of its prompt chunks
 * ({@link StepBatch.Logits#ALL}): row {@code i} of a chunk starting at position {@code c} is the distribution of the
 * token at {@code c + i + 1}; the chunk's last row, when it ends the prompt, is also the first draw's. Those rows come
 * out of what the step's other rows leave of {@link SchedulerConfig#maxLogitRows} ({@link #fit}), so a chunk may be
 * cut short and the prompt take more steps. Such a sequence reads nothing from the prefix cache (its cached tokens
 * would have no logits; vLLM does the same), does not speculate, and after a preemption keeps what it gathered
 * (recomputed rows are not gathered twice). Scheduler thread only.
 */
final class PromptLogprobs {
    private PromptLogprobs() {}

    /** Whether {@code s} still gathers prompt logprobs (asked for and not yet delivered). */
    static boolean collecting(Sequence s) {
        return s.promptLogprobs != null && !s.promptLogprobsSent;
    }

    /**
     * How many tokens each collecting entry may keep so that the step's logits rows stay within {@code maxRows}:
     * {@code others} rows are taken by the other entries, and the collecting ones (wanting {@code want[i]} tokens, one
     * row per token) share the rest in order, each keeping at least one token (one row). The scheduler's limits leave
     * at least one row per running sequence, so the rest is never short of that.
     */
    static int[] fit(int[] want, int others, int maxRows) {
        int spare = maxRows - others;
        int[] keep = new int[want.length];
        for (int i = 0; i < want.length; i++) {
            int later = want.length - i - 1; // each later entry keeps a row
            keep[i] = Math.max(1, Math.min(want[i], spare - later));
            spare -= keep[i];
        }
        return keep;
    }

    /**
     * Takes the logprobs out of the {@code n} logits rows from {@code firstRow} of a step that fed {@code s}'s tokens
     * from {@code s.computed} (called before {@code computed} moves on): the row of position {@code p} scores the token
     * at {@code p + 1} if that is a prompt token whose logprob is not yet gathered.
     */
    static void collect(Sequence s, StepResult res, int firstRow, int n, int vocab) {
        int[] prompt = s.req.promptIds();
        int k = s.req.promptLogprobs();
        // rows i in [from, to) are new: position s.computed + i is the next to gather and scores a prompt token
        int from = Math.max(0, s.promptLogprobs.size() - s.computed);
        int to = Math.min(n, prompt.length - 1 - s.computed);
        if (from >= to || s.computed + from != s.promptLogprobs.size()) {
            return;
        }
        // a full-vocabulary log-softmax per row (~1 ms at 128k ids): the rows side by side on the common pool, in order
        List<TopLogprobs> rows = IntStream.range(from, to)
                .parallel()
                .mapToObj(i ->
                        Sampler.logprobs(res.logits(), (firstRow + i) * vocab, vocab, prompt[s.computed + i + 1], k))
                .toList();
        s.promptLogprobs.addAll(rows);
    }

    /** Before {@code s}'s first token: hands the gathered logprobs to the listener once (nothing if none asked). */
    static void deliver(Sequence s) {
        if (!collecting(s)) {
            return;
        }
        s.promptLogprobsSent = true;
        int expected = s.req.promptIds().length - 1;
        if (s.promptLogprobs.size() != expected) {
            throw new IllegalStateException(
                    s + ": " + s.promptLogprobs.size() + " prompt logprobs gathered, expected " + expected);
        }
        s.listener.onPromptLogprobs(List.copyOf(s.promptLogprobs));
    }
}
