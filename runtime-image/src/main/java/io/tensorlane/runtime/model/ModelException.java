package io.tensorlane.runtime.model;

/**
 * A model directory (config.json, safetensors files) or a requested sharding cannot be used. The message names the
 * file, field or tensor and what was expected. An {@link IllegalArgumentException} so the CLI reports it as a usage error.
 */
public class ModelException extends IllegalArgumentException {
    public ModelException(String message) {
        super(message);
    }

    public ModelException(String message, Throwable cause) {
        super(message, cause);
    }
}
