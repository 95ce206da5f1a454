package io.tensorlane.runtime.structured;

/** A schema this server cannot guarantee: where ({@link #at}, a JSON path from {@code $}) and why. */
public final class SchemaException extends IllegalArgumentException {
    private final String at;
    private final String why;

    public SchemaException(String at, String why) {
        super(at + ": " + why);
        this.at = at;
        this.why = why;
    }

    public String why() {
        return why;
    }

    public String at() {
        return at;
    }
}
