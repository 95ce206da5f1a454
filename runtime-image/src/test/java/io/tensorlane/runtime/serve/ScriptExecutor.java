package io.tensorlane.runtime.serve;

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
 * else the lowest allowed id (as a GPU sampler honours the mask: whatever it draws is allowed).
 */
final class ScriptExecutor implements StepExecutor {
    private final int vocab;
    private final int eos;
    private final Map<Integer, Integer> promptLength = new HashMap<>();
    private volatile int[] script = new int[0];

    ScriptExecutor(int vocab, int eos) {
        this.vocab = vocab;
        this.eos = eos;
    }

    void script(int[] ids) {
        script = ids.clone();
    }

    @Override
    public StepResult step(StepBatch b, boolean wantLogits) {
        int m = b.logitTokens().length;
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
            int len = promptLength.computeIfAbsent(head(b, t), h -> pos + 1);
            int k = pos + 1 - len;
            ids[i] = k < s.length ? s[k] : eos;
            int[] mask = b.sampling().mask(i);
            if (mask != null && !allowed(mask, ids[i])) {
                ids[i] = fallback(mask);
            }
        }
        return new StepResult(ids, wantLogits ? new float[m * vocab] : null);
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
