package io.tensorlane.runtime.loadgen;

import java.util.Locale;

/** The OpenAI-compatible endpoint a load run targets. */
public enum Endpoint {
    COMPLETIONS("/v1/completions"),
    CHAT("/v1/chat/completions");

    private final String path;

    Endpoint(String path) {
        this.path = path;
    }

    public String path() {
        return path;
    }

    /** {@code completions} or {@code chat} (case-insensitive). */
    public static Endpoint parse(String s) {
        return switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "completions", "completion", "/v1/completions" -> COMPLETIONS;
            case "chat", "chat-completions", "/v1/chat/completions" -> CHAT;
            default -> throw new IllegalArgumentException("--endpoint must be completions or chat, not '" + s + "'");
        };
    }

    public String label() {
        return this == COMPLETIONS ? "completions" : "chat";
    }
}
