package io.tensorlane.runtime.sched;

import io.tensorlane.contract.SamplingBuffers;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A penalised sequence's host state for the GPU sampler (scheduler thread only): the count pair of every id seen in the
 * prompt (when the repetition penalty is on) or the output, kept up to date as tokens are generated (each new token is
 * one map look-up), and the bias pairs (logit_bias, and the EOS/stop ids banned while fewer than min_tokens were
 * generated). {@link #row} hands the sampler a row's entries; only penalised sequences have one.
 */
public final class PenaltyState {
    /** Most logit_bias entries a request may carry (the device buffer is sized by it; {@link SamplingBuffers}). */
    public static final int MAX_BIAS = SamplingBuffers.MAX_BIAS;
    /** Most ids min_tokens may ban (EOS and stop ids together). */
    public static final int MAX_BANNED = SamplingBuffers.MAX_BANNED;
    /** Most bad-word token sequences (each bans at most one id per draw). */
    public static final int MAX_BAD_SEQUENCES = SamplingBuffers.MAX_BAD_SEQUENCES;

    private final SamplingPenalties p;
    private final int promptLength;
    private final int[] biasPairs;
    private final int[] biasAndBanPairs;
    private final Map<Integer, Integer> slot = new HashMap<>();
    private int[] counts = new int[16]; // count pairs: id, generated count
    private int countPairs;
    private int seen; // generated tokens already counted

    /**
     * @param banned the ids min_tokens bans (the model's EOS ids unless ignore_eos, and the request's stop ids)
     */
    PenaltyState(SamplingPenalties p, int[] prompt, Set<Integer> banned) {
        this.p = p;
        this.promptLength = prompt.length;
        if (p.logitBias().size() > MAX_BIAS) {
            throw new IllegalArgumentException("at most " + MAX_BIAS + " logit_bias entries, got "
                    + p.logitBias().size());
        }
        Set<Integer> ban = p.minTokens() > 0 ? new TreeSet<>(banned) : Set.of();
        if (ban.size() > MAX_BANNED) {
            throw new IllegalArgumentException("min_tokens can ban at most " + MAX_BANNED + " ids, got " + ban.size());
        }
        if (p.badWords().size() > MAX_BAD_SEQUENCES) {
            throw new IllegalArgumentException("at most " + MAX_BAD_SEQUENCES + " bad word sequences, got "
                    + p.badWords().size());
        }
        biasPairs = pairs(p.logitBias(), Set.of());
        biasAndBanPairs = pairs(p.logitBias(), ban);
        if (p.repetition() != 1f) {
            for (int id : prompt) {
                slotOf(id);
            }
        }
    }

    /** Null when {@code p} changes nothing (the sequence samples as without penalties). */
    public static PenaltyState of(SamplingPenalties p, int[] prompt, Set<Integer> banned) {
        return p == null || p.isNone() ? null : new PenaltyState(p, prompt, banned);
    }

    /** Bias pairs: {@code bias} in id order, with -inf for the ids of {@code ban} (a ban wins over a bias). */
    private static int[] pairs(Map<Integer, Float> bias, Set<Integer> ban) {
        TreeSet<Integer> ids = new TreeSet<>(bias.keySet());
        ids.addAll(ban);
        int[] out = new int[2 * ids.size()];
        int j = 0;
        for (int id : ids) {
            float v = ban.contains(id) ? Float.NEGATIVE_INFINITY : bias.get(id);
            out[j++] = id;
            out[j++] = Float.floatToRawIntBits(v);
        }
        return out;
    }

    private int slotOf(int id) {
        Integer s = slot.get(id);
        if (s != null) {
            return s;
        }
        if (2 * countPairs == counts.length) {
            counts = Arrays.copyOf(counts, 2 * counts.length);
        }
        counts[2 * countPairs] = id;
        counts[2 * countPairs + 1] = 0; // a slot may be reused after a recount
        slot.put(id, countPairs);
        return countPairs++;
    }

    /**
     * The entries for the sequence's next draw, {@code tokens[0, promptLength + generated)} being its prompt and its
     * generated tokens (counts the tokens generated since the last call; a smaller {@code generated} than last time
     * recounts from the start, so a speculative step may call it with proposals and roll back).
     */
    public RowPenalty row(int[] tokens, int generated) {
        if (generated < seen) { // fewer tokens than last time (rolled back, e.g. rejected proposals): count afresh
            slot.clear();
            countPairs = 0;
            seen = 0;
            if (p.repetition() != 1f) {
                for (int i = 0; i < promptLength; i++) {
                    slotOf(tokens[i]);
                }
            }
        }
        if (p.countsTokens()) {
            for (; seen < generated; seen++) {
                int slot = slotOf(tokens[promptLength + seen]); // first: it may grow counts
                counts[2 * slot + 1]++;
            }
        }
        seen = generated;
        int[] bias = generated < p.minTokens() ? biasAndBanPairs : biasPairs;
        if (!p.badWords().isEmpty()) {
            bias = withBadWords(bias, tokens, generated);
        }
        int[] all = Arrays.copyOf(bias, bias.length + 2 * countPairs);
        System.arraycopy(counts, 0, all, bias.length, 2 * countPairs);
        return new RowPenalty(p.presence(), p.frequency(), p.repetition(), all, bias.length / 2);
    }

    /** {@code bias} plus a -inf pair for each bad word whose last id would complete it now (a ban wins). */
    private int[] withBadWords(int[] bias, int[] tokens, int generated) {
        java.util.TreeMap<Integer, Integer> m = new java.util.TreeMap<>();
        for (int j = 0; j < bias.length; j += 2) {
            m.put(bias[j], bias[j + 1]);
        }
        int end = promptLength + generated;
        for (int[] w : p.badWords()) {
            int prefix = w.length - 1;
            if (prefix > generated) {
                continue;
            }
            boolean match = true;
            for (int j = 0; j < prefix && match; j++) {
                match = tokens[end - prefix + j] == w[j];
            }
            if (match) {
                m.put(w[prefix], Float.floatToRawIntBits(Float.NEGATIVE_INFINITY));
            }
        }
        int[] out = new int[2 * m.size()];
        int j = 0;
        for (Map.Entry<Integer, Integer> e : m.entrySet()) {
            out[j++] = e.getKey();
            out[j++] = e.getValue();
        }
        return out;
    }

    /**
     * Most pairs one row can hold for sequences of at most {@code maxModelLen} tokens over {@code vocab} ids: one count
     * pair per distinct id, the bias, the min_tokens bans and the bad words' bans.
     */
    public static long maxPairsPerRow(int maxModelLen, int vocab) {
        return SamplingBuffers.maxPairsPerRow(maxModelLen, vocab);
    }
}
