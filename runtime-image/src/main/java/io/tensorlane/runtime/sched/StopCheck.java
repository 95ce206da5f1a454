package io.tensorlane.runtime.sched;

import java.util.Set;

/** Whether a sequence ends with the token it just generated, and why; pure. */
final class StopCheck {
    private StopCheck() {}

    /**
     * The reason {@code r}'s sequence ends after {@code token}, its {@code generated}-th: the listener asked to stop
     * ({@code more} false: STOP), max_tokens reached (LENGTH), an EOS id unless ignore_eos, or one of its stop token ids
     * (STOP); null when it goes on. The listener's stop wins over LENGTH, LENGTH over EOS.
     */
    static FinishReason after(SeqRequest r, int generated, int token, boolean more, Set<Integer> eos) {
        if (!more) {
            return FinishReason.STOP;
        }
        if (generated >= r.maxTokens()) {
            return FinishReason.LENGTH;
        }
        if ((!r.ignoreEos() && eos.contains(token)) || r.stopTokenIds().contains(token)) {
            return FinishReason.STOP;
        }
        return null;
    }
}
