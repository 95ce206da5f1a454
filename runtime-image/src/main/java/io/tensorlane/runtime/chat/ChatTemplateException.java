package io.tensorlane.runtime.chat;

/**
 * A chat template could not be compiled or rendered: a template syntax error, a {@code raise_exception(msg)} call in
 * the template (the message is the template's own, e.g. "Conversation roles must alternate user/assistant/..."), or
 * an operation the sandbox refuses. The HTTP layer maps it to 400: the request's messages do not fit the model's
 * template.
 */
public class ChatTemplateException extends RuntimeException {
    private final boolean raisedByTemplate;

    public ChatTemplateException(String message, boolean raisedByTemplate) {
        super(message);
        this.raisedByTemplate = raisedByTemplate;
    }

    /** True when the template itself called {@code raise_exception(msg)}; {@link #getMessage()} is then msg. */
    public boolean raisedByTemplate() {
        return raisedByTemplate;
    }
}
