package io.tensorlane.contract;

import java.util.Locale;
import java.util.Optional;

/**
 * The allreduce a pod runs, as the operator decides it ({@code status.allreduce.mode}) and hands it to the runtime
 * ({@link EngineEnv#ALLREDUCE}). Not the user's request ({@code spec.allreduce.mode}: Auto, Custom or NCCL), which
 * the planner resolves into one of these.
 */
public enum Allreduce {
    /** Tensorlane's P2P kernels up to the buffer size, NCCL above. */
    Custom,
    /** NCCL for every message. */
    NCCL,
    /** One rank: nothing to reduce. */
    None;

    /** The value named {@code text}, case-insensitively and ignoring surrounding blanks; empty when none is. */
    public static Optional<Allreduce> find(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String t = text.trim().toLowerCase(Locale.ROOT);
        for (Allreduce a : values()) {
            if (a.name().toLowerCase(Locale.ROOT).equals(t)) {
                return Optional.of(a);
            }
        }
        return Optional.empty();
    }
}
