package io.tensorlane.operator.manifests;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Iterator;
import java.util.Map;

/**
 * Writes a JSON tree as a Lua table constructor, the way Argo CD hands a live object to a health script
 * (objects become tables keyed by field name, arrays become sequences, null fields are absent).
 */
final class LuaLiteral {
    private LuaLiteral() {}

    static String of(JsonNode node) {
        StringBuilder sb = new StringBuilder();
        write(node, sb);
        return sb.toString();
    }

    private static void write(JsonNode node, StringBuilder sb) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            sb.append("nil");
        } else if (node.isObject()) {
            sb.append('{');
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (e.getValue().isNull()) {
                    continue;
                }
                sb.append('[');
                string(e.getKey(), sb);
                sb.append("]=");
                write(e.getValue(), sb);
                sb.append(',');
            }
            sb.append('}');
        } else if (node.isArray()) {
            sb.append('{');
            for (JsonNode element : node) {
                write(element, sb);
                sb.append(',');
            }
            sb.append('}');
        } else if (node.isBoolean()) {
            sb.append(node.booleanValue());
        } else if (node.isNumber()) {
            sb.append(node.numberValue().toString());
        } else {
            string(node.asText(), sb);
        }
    }

    /** A Lua string literal with every byte outside printable ASCII escaped as a decimal escape. */
    private static void string(String s, StringBuilder sb) {
        sb.append('"');
        for (byte b : s.getBytes(java.nio.charset.StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (c == '"' || c == '\\') {
                sb.append('\\').append((char) c);
            } else if (c >= 0x20 && c < 0x7f) {
                sb.append((char) c);
            } else {
                sb.append('\\').append(String.format("%03d", c));
            }
        }
        sb.append('"');
    }
}
