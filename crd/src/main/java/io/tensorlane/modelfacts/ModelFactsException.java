package io.tensorlane.modelfacts;

/** A model that cannot be read: the message names the file or field and what is wrong. */
public class ModelFactsException extends RuntimeException {
    public ModelFactsException(String message) {
        super(message);
    }

    public ModelFactsException(String message, Throwable cause) {
        super(message, cause);
    }
}
