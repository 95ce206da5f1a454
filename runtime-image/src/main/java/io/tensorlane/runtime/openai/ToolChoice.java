package io.tensorlane.runtime.openai;

/**
 * A chat request's {@code tool_choice}: {@code none} (the answer is text), {@code auto} (the model may call tools; its
 * calls are parsed out of the answer), {@code required} (at least one call, enforced by constrained decoding) or one
 * named function ({@code {"type": "function", "function": {"name": ...}}}, {@link #name}). Absent, it is {@code auto}
 * when the request has tools and {@code none} otherwise, as OpenAI's default.
 */
public record ToolChoice(Mode mode, String name) {
    public enum Mode {
        NONE,
        AUTO,
        REQUIRED,
        NAMED
    }

    public static final ToolChoice NONE = new ToolChoice(Mode.NONE, null);
    public static final ToolChoice AUTO = new ToolChoice(Mode.AUTO, null);
    public static final ToolChoice REQUIRED = new ToolChoice(Mode.REQUIRED, null);

    /** Whether the answer is parsed for tool calls. */
    public boolean parses() {
        return mode != Mode.NONE;
    }

    /** Whether the answer must be tool calls (constrained decoding). */
    public boolean forced() {
        return mode == Mode.REQUIRED || mode == Mode.NAMED;
    }
}
