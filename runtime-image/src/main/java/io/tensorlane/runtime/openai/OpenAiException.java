package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * An error answered to an OpenAI-API client: the HTTP status and the body {@code {"error": {"message", "type", "param",
 * "code"}}} that the openai Python client reads ({@code APIStatusError.message}, {@code .body}).
 *
 * <p>Client errors (4xx) carry type {@code invalid_request_error} as OpenAI does; {@code param} names the offending
 * request field where one does; {@code code} is OpenAI's short code or null.
 */
public final class OpenAiException extends RuntimeException {
    public static final String INVALID_REQUEST = "invalid_request_error";

    private final int status;
    private final String type;
    private final String param;
    private final String code;

    public OpenAiException(int status, String type, String param, String code, String message) {
        super(message);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
    }

    /** 400 {@code invalid_request_error} about {@code param} (null when no one field is at fault). */
    public static OpenAiException badRequest(String param, String message) {
        return new OpenAiException(400, INVALID_REQUEST, param, null, message);
    }

    /** 400 naming an OpenAI parameter that this server does not implement. */
    public static OpenAiException notSupported(String param, String what) {
        return new OpenAiException(400, INVALID_REQUEST, param, "unsupported_parameter", what + " is not supported");
    }

    /** vLLM's answer to a request for a model that is not served: 404 "The model `x` does not exist.". */
    public static OpenAiException modelNotFound(String model) {
        return new OpenAiException(
                404, INVALID_REQUEST, "model", "model_not_found", "The model `" + model + "` does not exist.");
    }

    /** 500 {@code internal_server_error}; message should be safe to show to a client. */
    public static OpenAiException internal(String message) {
        return new OpenAiException(500, "internal_server_error", null, null, message);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String param() {
        return param;
    }

    public String code() {
        return code;
    }

    /** {@code {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}}; absent values are JSON null. */
    public ObjectNode toJsonNode() {
        ObjectNode root = OpenAiJson.MAPPER.createObjectNode();
        ObjectNode error = root.putObject("error");
        error.put("message", getMessage());
        error.put("type", type);
        error.put("param", param);
        error.put("code", code);
        return root;
    }

    public String toJson() {
        return OpenAiJson.write(toJsonNode());
    }
}
