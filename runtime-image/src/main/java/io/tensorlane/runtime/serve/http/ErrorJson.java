package io.tensorlane.runtime.serve.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The OpenAI error body for errors the HTTP front itself answers (routing, body size, internal errors). */
final class ErrorJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ErrorJson() {}

    static String of(String message, String type, String param, int code) {
        ObjectNode root = JSON.createObjectNode();
        ObjectNode e = root.putObject("error");
        e.put("message", message);
        e.put("type", type);
        if (param == null) {
            e.putNull("param");
        } else {
            e.put("param", param);
        }
        e.put("code", code);
        return root.toString();
    }
}
