package io.tensorlane.runtime.sched;

import java.util.Locale;

/** Why a sequence ended (the {@code finished_reason} label of {@code tensorlane:request_success_total}). */
public enum FinishReason {
    /** EOS, a stop token id, or the listener asked to stop (a stop string). */
    STOP,
    /** max tokens reached. */
    LENGTH,
    /** cancelled (client gone) or the scheduler closed. */
    ABORT,
    /** the step executor failed while the sequence ran, or its listener threw. */
    ERROR;

    /** The label value, as vLLM writes it: lower case. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
