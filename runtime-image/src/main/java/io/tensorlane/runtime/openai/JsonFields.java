package io.tensorlane.runtime.openai;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Typed reads of the fields of one JSON object, each refusing a wrong type with a 400 that names the field. A field
 * that is absent or JSON null reads as null (as pydantic's optional fields do in vLLM).
 */
final class JsonFields {
    private final JsonNode object;
    private final String prefix;

    JsonFields(JsonNode object, String prefix) {
        this.object = object;
        this.prefix = prefix;
    }

    static String kind(JsonNode n) {
        if (n == null || n.isMissingNode() || n.isNull()) {
            return "null";
        }
        if (n.isTextual()) {
            return "a string";
        }
        if (n.isBoolean()) {
            return "a boolean";
        }
        if (n.isNumber()) {
            return "a number";
        }
        return n.isArray() ? "an array" : "an object";
    }

    String name(String field) {
        return prefix + field;
    }

    /** The field's node, or null when absent or JSON null. */
    JsonNode node(String field) {
        JsonNode n = object.get(field);
        return n == null || n.isNull() ? null : n;
    }

    boolean has(String field) {
        return node(field) != null;
    }

    OpenAiException typeError(String field, String expected, JsonNode got) {
        return OpenAiException.badRequest(
                name(field), "'" + name(field) + "' must be " + expected + ", got " + kind(got));
    }

    String string(String field) {
        JsonNode n = node(field);
        if (n == null) {
            return null;
        }
        if (!n.isTextual()) {
            throw typeError(field, "a string", n);
        }
        return n.textValue();
    }

    Boolean bool(String field) {
        JsonNode n = node(field);
        if (n == null) {
            return null;
        }
        if (!n.isBoolean()) {
            throw typeError(field, "a boolean", n);
        }
        return n.booleanValue();
    }

    boolean bool(String field, boolean dflt) {
        Boolean b = bool(field);
        return b == null ? dflt : b;
    }

    /** A finite number; NaN and the infinities are refused by name. */
    Double number(String field) {
        JsonNode n = node(field);
        if (n == null) {
            return null;
        }
        if (!n.isNumber()) {
            throw typeError(field, "a number", n);
        }
        double d = n.doubleValue();
        if (!Double.isFinite(d)) {
            throw OpenAiException.badRequest(name(field), "'" + name(field) + "' must be a finite number, got " + d);
        }
        return d;
    }

    /** An integer (an integral float such as 5.0 is taken, as pydantic does) within the long range. */
    Long longValue(String field) {
        JsonNode n = node(field);
        return n == null ? null : asLong(field, n);
    }

    Long asLong(String field, JsonNode n) {
        if (!n.isNumber()) {
            throw typeError(field, "an integer", n);
        }
        if (n.isIntegralNumber()) {
            if (!n.canConvertToLong()) {
                throw OpenAiException.badRequest(name(field), "'" + name(field) + "' is out of range: " + n.asText());
            }
            return n.longValue();
        }
        double d = n.doubleValue();
        if (!Double.isFinite(d) || d != Math.rint(d) || Math.abs(d) > 9.007199254740992E15) {
            throw OpenAiException.badRequest(
                    name(field), "'" + name(field) + "' must be an integer, got " + n.asText());
        }
        return (long) d;
    }

    Integer integer(String field) {
        Long l = longValue(field);
        return l == null ? null : toInt(field, l);
    }

    int toInt(String field, long l) {
        if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
            throw OpenAiException.badRequest(name(field), "'" + name(field) + "' is out of range: " + l);
        }
        return (int) l;
    }

    /** A string, or an array of strings; null when absent. */
    List<String> stringOrList(String field) {
        JsonNode n = node(field);
        if (n == null) {
            return null;
        }
        if (n.isTextual()) {
            return List.of(n.textValue());
        }
        if (!n.isArray()) {
            throw typeError(field, "a string or an array of strings", n);
        }
        List<String> out = new ArrayList<>();
        for (JsonNode e : n) {
            if (!e.isTextual()) {
                throw typeError(field, "a string or an array of strings", n);
            }
            out.add(e.textValue());
        }
        return out;
    }

    /** An array of integers; null when absent. */
    List<Long> longList(String field) {
        JsonNode n = node(field);
        if (n == null) {
            return null;
        }
        if (!n.isArray()) {
            throw typeError(field, "an array of integers", n);
        }
        List<Long> out = new ArrayList<>();
        for (JsonNode e : n) {
            if (!e.isNumber()) {
                throw typeError(field, "an array of integers", n);
            }
            out.add(asLong(field, e));
        }
        return out;
    }

    /** A JSON object's fields; null when absent. */
    JsonFields object(String field) {
        JsonNode n = node(field);
        if (n == null) {
            return null;
        }
        if (!n.isObject()) {
            throw typeError(field, "an object", n);
        }
        return new JsonFields(n, name(field) + ".");
    }
}
