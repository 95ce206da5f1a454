package io.tensorlane.runtime.serve;

import io.tensorlane.runtime.sched.PenaltyReference;
import io.tensorlane.runtime.sched.RowPenalty;
import io.tensorlane.runtime.sched.StepBatch;
import io.tensorlane.runtime.sched.StepExecutor;
import io.tensorlane.runtime.sched.StepResult;
import java.util.HashMap;
import java.util.Map;

/**
 * A fake step function that answers every sequence with the same scripted token ids, then EOS: a sequence is known by
 * the first block of its block table, and its prompt length is read off the step whose chunk starts at position 0
 * (prompts here fit one chunk). The script is set by the test before each request. A row with a token mask takes the
 * scripted token when the mask allows it, else the first allowed of {@code "}, {@code }}, {@code ]}, {@code 0}, EOS,
 * else the lowest allowed id (as a GPU sampler honours the mask: whatever it draws is allowed). A penalised row draws
 * greedily from logits 1 for the scripted id, 0.5 for the {@link #background} id and -10 elsewhere, penalised by the host
 * reference of the GPU sampler ({@link PenaltyReference}), so penalties and biases change the answer as on the GPU.
 * Logits, when the step asks for them, are {@link #logit}: a function of the token fed at the row's position, that
 * position and the id, so a row's logprobs say which token and position it scored (prompt logprobs are checked against
 * it). A prompt-logprobs step has a logits row at every position, so there the prompt length is not read off the first
 * row: the test sets it ({@link #promptLength}).
 */
final class ScriptExecutor implements StepExecutor {
    private final int vocab;
    private final int eos;
    private final Map<Integer, Integer> promptLength = new HashMap<>();
    private volatile int[] script = new int[0];
    private volatile int background = -1;
    private volatile int fixedPromptLength = -1;
    /** The most logits rows a step asked for so far. */
    volatile int maxLogitRows;
    /** The penalty of the last penalised row drawn (null: none yet). */
    volatile RowPenalty lastPenalty;

    ScriptExecutor(int vocab, int eos) {
        this.vocab = vocab;
        this.eos = eos;
    }

    void script(int[] ids) {
        script = ids.clone();
    }

    /** Every sequence's prompt has {@code n} tokens (-1: read it off the first logits row, as for plain prompts). */
    void promptLength(int n) {
        fixedPromptLength = n;
    }

    /** The logit of {@code id} in the row of a token {@code fed} at {@code position}. */
    static float logit(int fed, int position, int id) {
        return (float) (3 * Math.sin(fed * 0.731 + position * 1.37 + id * 2.113));
    }

    /** The id penalised rows take when the penalties push the scripted one below it. */
    void background(int id) {
        background = id;
    }

    @Override
    public StepResult step(StepBatch b, boolean wantLogits) {
        int m = b.logitTokens().length;
        maxLogitRows = Math.max(maxLogitRows, m);
        int[] ids = new int[m];
        for (int t = 0; t < b.tokens(); t++) {
            if (b.positions()[t] == 0 && b.slots()[t] >= 0) {
                promptLength.remove(head(b, t));
            }
        }
        int[] s = script;
        for (int i = 0; i < m; i++) {
            int t = b.logitTokens()[i];
            int pos = b.positions()[t];
            int len =
                    fixedPromptLength > 0 ? fixedPromptLength : promptLength.computeIfAbsent(head(b, t), h -> pos + 1);
            int k = pos + 1 - len;
            ids[i] = k < 0 ? eos : k < s.length ? s[k] : eos; // k < 0: a prompt row (prompt logprobs), not drawn
            RowPenalty pen = b.sampling().penalty(i);
            if (pen != null) {
                lastPenalty = pen;
                float[] row = new float[vocab];
                java.util.Arrays.fill(row, -10f);
                row[ids[i]] = 1f;
                if (background >= 0 && background != ids[i]) row[background] = 0.5f;
                PenaltyReference.apply(row, 0, vocab, pen);
                int best = 0;
                for (int id = 1; id < vocab; id++) if (row[id] > row[best]) best = id;
                ids[i] = best;
            }
            int[] mask = b.sampling().mask(i);
            if (mask != null && !allowed(mask, ids[i])) {
                ids[i] = fallback(mask);
            }
        }
        float[] logits = null;
        if (wantLogits) {
            logits = new float[m * vocab];
            for (int i = 0; i < m; i++) {
                int t = b.logitTokens()[i];
                for (int id = 0; id < vocab; id++) {
                    logits[i * vocab + id] = logit(b.tokenIds()[t], b.positions()[t], id);
                }
            }
        }
        return new StepResult(ids, logits);
    }

    static boolean allowed(int[] mask, int id) {
        return id >= 0 && id < mask.length * 32 && (mask[id >>> 5] >>> (id & 31) & 1) != 0;
    }

    private int fallback(int[] mask) {
        for (int id : new int[] {'"', '}', ']', '0', eos}) {
            if (allowed(mask, id)) return id;
        }
        for (int id = 0; id < mask.length * 32; id++) {
            if (allowed(mask, id)) return id;
        }
        throw new IllegalStateException("a mask that allows nothing");
    }

    private static int head(StepBatch b, int token) {
        return b.blockTables()[b.tokenRow()[token] * b.maxBlocksPerSeq()];
    }

    @Override
    public int vocabSize() {
        return vocab;
    }
}
