package io.tensorlane.runtime.loadgen;

import java.util.List;
import java.util.Locale;

/**
 * The shared-prefix workloads, for measuring prefix caching.
 *
 * @param mode            {@link Mode#RANDOM}: vLLM's random prompts, nothing shared (the default);
 *                        {@link Mode#SHARED_PROMPT}: "many users, one long system prompt": every request is the same
 *                        system prompt and its own random question of {@code --input-len} words;
 *                        {@link Mode#MULTI_TURN}: conversations of {@code turns} turns, each turn resending the system
 *                        prompt and the whole history (the questions and the server's answers) plus a new question
 * @param systemPromptLen words of the shared system prompt (about one token each)
 * @param turns           turns per conversation ({@link Mode#MULTI_TURN})
 */
public record PrefixWorkload(Mode mode, int systemPromptLen, int turns) {
    public static final PrefixWorkload NONE = new PrefixWorkload(Mode.RANDOM, 0, 1);

    public enum Mode {
        RANDOM,
        SHARED_PROMPT,
        MULTI_TURN;

        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }

        /** {@code random}, {@code shared-prompt} or {@code multi-turn}. */
        public static Mode parse(String s) {
            for (Mode m : values()) {
                if (m.label().equals(s.trim().toLowerCase(Locale.ROOT))) {
                    return m;
                }
            }
            throw new IllegalArgumentException(
                    "--workload must be random, shared-prompt or multi-turn, not '" + s + "'");
        }
    }

    /** The problems of these settings with {@code c}'s (empty when valid). */
    List<String> problems(LoadgenConfig c) {
        List<String> p = new java.util.ArrayList<>();
        if (systemPromptLen < 0) {
            p.add("--system-prompt-len must be >= 0, not " + systemPromptLen);
        }
        if (turns < 1) {
            p.add("--turns must be >= 1, not " + turns);
        }
        if (mode != Mode.RANDOM && c.tokenIds()) {
            p.add("--workload " + mode.label() + " sends text: drop --token-ids");
        }
        if (mode == Mode.MULTI_TURN && c.openLoop()) {
            p.add("--workload multi-turn runs closed loop: --concurrency conversations at once, not --request-rate");
        }
        if (mode == Mode.MULTI_TURN && c.numRequests() < 1) {
            p.add("--workload multi-turn needs --num-requests >= 1 (conversations per level)");
        }
        return p;
    }
}
