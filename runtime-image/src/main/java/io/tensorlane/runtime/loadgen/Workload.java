package io.tensorlane.runtime.loadgen;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Synthetic prompts in the manner of vLLM's random dataset: input and output lengths uniform in
 * [len·(1−r), len·(1+r)] (integers, both ends included), prompts of random words (about one token each with common
 * BPE vocabularies; the server reports the real count in usage) or of random token ids (exact length, completions
 * endpoint only). Deterministic for a seed: request i of a level is the same whatever the concurrency.
 */
public final class Workload {
    /**
     * One request to send: the prompt is {@code text} or, when non-null, {@code tokenIds}; before it, when non-null, a
     * {@code system} prompt and the {@code history} of a conversation (user and assistant contents, alternating, user
     * first). {@code inputLen} counts the words of all of them.
     */
    public record Prompt(
            int index, String text, int[] tokenIds, int inputLen, int maxTokens, String system, List<String> history) {
        public Prompt(int index, String text, int[] tokenIds, int inputLen, int maxTokens) {
            this(index, text, tokenIds, inputLen, maxTokens, null, List.of());
        }

        public Prompt {
            history = history == null ? List.of() : List.copyOf(history);
        }
    }

    /** Short common English words: most are a single token in Llama/Mistral/Qwen vocabularies (with the leading space). */
    static final String[] WORDS =
            ("the of and to in is was for on are with as his they at be this from have or by one had not but what all were "
                            + "when we there can an your which their said if do will each about how up out them then she many some so these would other into has "
                            + "more her two like him see time could no make than first been its who now people my made over did down only way find use may water "
                            + "long little very after words called just where most know get through back much go good new write our me man too any day same right "
                            + "look think also around another came come work three word must because does part even place well such here take why things help put "
                            + "years different away again off went old number great tell men say small every found still between name should home big give air line "
                            + "set own under read last never us left end along while might next sound below saw something thought both few those always looked show "
                            + "large often together asked house world going want school important until form food keep children feet land side without boy once "
                            + "animals life enough took sometimes four head above kind began almost live page got earth need far hand high year mother light parts "
                            + "country father let night following picture being study second eyes soon times story boys since white days ever paper hard near sentence "
                            + "better best across during today others however sure means knew try told young miles sun ways thing whole hear example heard several "
                            + "change answer room sea against top turned learn point city play toward five using himself usually")
                    .split(" ");

    private final LoadgenConfig config;
    private final String system;

    public Workload(LoadgenConfig config) {
        this.config = config;
        PrefixWorkload pw = config.prefix();
        this.system = pw.mode() == PrefixWorkload.Mode.RANDOM || pw.systemPromptLen() == 0
                ? null
                : words(new SplittableRandom(config.seed() ^ 0x5EEDL), pw.systemPromptLen());
    }

    /** The system prompt every request of a shared-prefix workload starts with (null for random prompts). */
    public String systemPrompt() {
        return system;
    }

    private static String words(SplittableRandom rng, int n) {
        StringBuilder b = new StringBuilder(n * 6);
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                b.append(' ');
            }
            b.append(WORDS[rng.nextInt(WORDS.length)]);
        }
        return b.toString();
    }

    /**
     * Turn {@code turn} of conversation {@code conversation} (multi-turn): a new question after the system prompt and
     * {@code history} (every earlier question and the server's answer to it). Its index is {@code conversation ×
     * turns + turn}.
     */
    public Prompt turn(int conversation, int turn, List<String> history) {
        int turns = config.prefix().turns();
        Prompt q = prompt(conversation * turns + turn);
        int words = q.inputLen() + (system == null ? 0 : config.prefix().systemPromptLen());
        for (String h : history) {
            words += h.isEmpty() ? 0 : h.split(" ").length;
        }
        return new Prompt(q.index(), q.text(), null, words, q.maxTokens(), system, history);
    }

    /** Uniform integer in [floor(len·(1−r)), floor(len·(1+r))], at least 1. */
    static int sampleLength(SplittableRandom rng, int len, double range) {
        int lo = Math.max(1, (int) Math.floor(len * (1 - range)));
        int hi = Math.max(lo, (int) Math.floor(len * (1 + range)));
        return lo + rng.nextInt(hi - lo + 1);
    }

    /** Request {@code index} (same prompt for the same seed and index). */
    public Prompt prompt(int index) {
        SplittableRandom rng = new SplittableRandom(config.seed() * 0x9E3779B97F4A7C15L + index);
        int in = sampleLength(rng, config.inputLen(), config.inputLenRange());
        int out = sampleLength(rng, config.outputLen(), config.outputLenRange());
        if (config.tokenIds()) {
            int vocab = config.vocabSize();
            int lo = Math.min(1000, vocab / 2);
            int[] ids = new int[in];
            for (int i = 0; i < in; i++) {
                ids[i] = lo + rng.nextInt(vocab - lo);
            }
            return new Prompt(index, null, ids, in, out);
        }
        String text = words(rng, in);
        if (system != null) {
            return new Prompt(index, text, null, in + config.prefix().systemPromptLen(), out, system, List.of());
        }
        return new Prompt(index, text, null, in, out);
    }

    /** The first {@code n} prompts. */
    public List<Prompt> prompts(int n) {
        List<Prompt> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            l.add(prompt(i));
        }
        return l;
    }
}
