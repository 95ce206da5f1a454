package io.tensorlane.runtime.structured;

import com.fasterxml.jackson.databind.JsonNode;
import dk.brics.automaton.Automaton;
import io.tensorlane.runtime.chat.PyJson;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A JSON schema compiled to a DFA over UTF-8 bytes (each byte a char 0..255 of a dk.brics {@link Automaton}) that
 * accepts exactly the JSON texts this server lets a constrained answer write. Every accepted text parses and validates
 * against the schema; the converse is narrowed on purpose, as outlines and vLLM narrow it: objects write their declared
 * properties in the schema's order (required ones always, optional ones or not), no others; separators are {@code ,}
 * and {@code :} each optionally followed by one space, no other whitespace; integers and fractions have at most 16
 * digits, exponents 3; a value of any type (an empty schema, {@code json_object}'s members) nests at most {@link
 * #ANY_DEPTH} levels.
 *
 * <p>Supported: {@code type} (a name or a list), {@code properties}, {@code required}, {@code additionalProperties}
 * (false, true, or a schema when there are no properties: a map of such values), {@code items}, {@code minItems},
 * {@code maxItems}, {@code enum}, {@code const}, {@code anyOf}, {@code allOf} of one schema, {@code minLength},
 * {@code maxLength} (characters), {@code $ref} to {@code #/$defs/...} or {@code #/definitions/...} (not recursive), and the
 * annotations (title, description, default, examples, $schema, $id, $comment). Anything else is refused with a
 * {@link SchemaException} naming the keyword and where it is: its constraint could not be guaranteed.
 */
public final class SchemaCompiler {
    /** Nesting levels of a value of any type. */
    public static final int ANY_DEPTH = 4;

    private static final Set<String> ANNOTATIONS =
            Set.of("title", "description", "default", "examples", "$schema", "$id", "$comment", "$defs", "definitions");
    private static final Set<String> KEYWORDS = Set.of(
            "type",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "minItems",
            "maxItems",
            "enum",
            "const",
            "anyOf",
            "allOf",
            "minLength",
            "maxLength",
            "$ref");

    private static final com.fasterxml.jackson.databind.ObjectMapper MAPPER =
            new com.fasterxml.jackson.databind.ObjectMapper();

    private final JsonNode root;
    private final Deque<String> refs = new ArrayDeque<>();
    private final Map<Integer, Automaton> any = new HashMap<>();

    private SchemaCompiler(JsonNode root) {
        this.root = root;
    }

    /** The DFA of the JSON texts of {@code schema} (minimized). */
    public static Automaton compile(JsonNode schema) {
        Automaton a = new SchemaCompiler(schema).value(schema, "$");
        a.minimize();
        a.removeDeadTransitions();
        return a;
    }

    /** Any JSON object ({@code response_format: json_object}), members nested at most {@link #ANY_DEPTH} levels. */
    public static Automaton anyObject() {
        Automaton a = new SchemaCompiler(null).object(ANY_DEPTH);
        a.minimize();
        a.removeDeadTransitions();
        return a;
    }

    /** The bytes of {@code s} (UTF-8) as a literal. */
    public static Automaton literal(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder chars = new StringBuilder(b.length);
        for (byte x : b) chars.append((char) (x & 0xff));
        return Automaton.makeString(chars.toString());
    }

    Automaton value(JsonNode s, String at) {
        if (s.isBoolean()) {
            if (s.booleanValue()) return any(ANY_DEPTH);
            throw new SchemaException(at, "the schema false accepts nothing");
        }
        if (!s.isObject()) throw new SchemaException(at, "a schema must be an object or a boolean");
        for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!KEYWORDS.contains(k) && !ANNOTATIONS.contains(k)) {
                throw new SchemaException(at, "'" + k + "' is not supported");
            }
        }
        if (s.has("$ref")) return ref(s, at);
        if (s.has("allOf")) {
            JsonNode all = s.get("allOf");
            if (!all.isArray() || all.size() != 1 || s.size() > 1 + annotations(s)) {
                throw new SchemaException(at + ".allOf", "only an allOf of one schema, alone, is supported");
            }
            return value(all.get(0), at + ".allOf[0]");
        }
        if (s.has("const")) return json(s.get("const"));
        if (s.has("enum")) {
            JsonNode e = s.get("enum");
            if (!e.isArray() || e.isEmpty()) throw new SchemaException(at + ".enum", "must be a non-empty array");
            List<Automaton> alts = new ArrayList<>();
            for (JsonNode v : e) alts.add(json(v));
            return Automaton.union(alts);
        }
        if (s.has("anyOf")) {
            JsonNode alts = s.get("anyOf");
            if (!alts.isArray() || alts.isEmpty())
                throw new SchemaException(at + ".anyOf", "must be a non-empty array");
            List<Automaton> out = new ArrayList<>();
            for (int i = 0; i < alts.size(); i++) out.add(value(alts.get(i), at + ".anyOf[" + i + "]"));
            return Automaton.union(out);
        }
        JsonNode type = s.get("type");
        if (type == null) {
            if (s.has("properties") || s.has("additionalProperties") || s.has("required")) return object(s, at);
            if (s.has("items") || s.has("minItems") || s.has("maxItems")) return array(s, at);
            if (s.has("minLength") || s.has("maxLength")) return string(s, at);
            return any(ANY_DEPTH);
        }
        List<String> types = new ArrayList<>();
        if (type.isTextual()) {
            types.add(type.textValue());
        } else if (type.isArray() && !type.isEmpty()) {
            type.forEach(t -> types.add(t.asText()));
        } else {
            throw new SchemaException(at + ".type", "must be a type name or a non-empty list of them");
        }
        List<Automaton> out = new ArrayList<>();
        for (String t : types) out.add(typed(t, s, at));
        return Automaton.union(out);
    }

    private static int annotations(JsonNode s) {
        int n = 0;
        for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) if (ANNOTATIONS.contains(it.next())) n++;
        return n;
    }

    private Automaton typed(String t, JsonNode s, String at) {
        switch (t) {
            case "object":
                return object(s, at);
            case "array":
                return array(s, at);
            case "string":
                return string(s, at);
            case "integer":
                return integer();
            case "number":
                return number();
            case "boolean":
                return literal("true").union(literal("false"));
            case "null":
                return literal("null");
            default:
                throw new SchemaException(at + ".type", "unknown type '" + t + "'");
        }
    }

    private Automaton ref(JsonNode s, String at) {
        String ref = s.get("$ref").asText();
        JsonNode target = null;
        for (String prefix : List.of("#/$defs/", "#/definitions/")) {
            if (ref.startsWith(prefix) && root != null) {
                target = root.path(prefix.substring(2, prefix.length() - 1)).get(ref.substring(prefix.length()));
            }
        }
        if (ref.equals("#")) target = root;
        if (target == null) throw new SchemaException(at + ".$ref", "cannot resolve '" + ref + "'");
        if (refs.contains(ref)) throw new SchemaException(at + ".$ref", "recursive '" + ref + "' is not supported");
        refs.push(ref);
        try {
            return value(target, ref);
        } finally {
            refs.pop();
        }
    }

    private Automaton object(JsonNode s, String at) {
        JsonNode props = s.get("properties");
        JsonNode extra = s.get("additionalProperties");
        Set<String> required = new java.util.HashSet<>();
        for (JsonNode r : s.path("required")) required.add(r.asText());
        for (String r : required) {
            if (props == null || !props.has(r)) {
                throw new SchemaException(at + ".required", "'" + r + "' is required but not in properties");
            }
        }
        if (props == null || props.isEmpty()) {
            if (extra != null && extra.isObject())
                return members(Automaton.makeEmpty(), value(extra, at + ".additionalProperties"));
            if (extra != null && extra.isBoolean() && !extra.booleanValue()) return literal("{}");
            return object(ANY_DEPTH);
        }
        if (!props.isObject()) throw new SchemaException(at + ".properties", "must be an object");
        List<String> names = new ArrayList<>();
        props.fieldNames().forEachRemaining(names::add);
        List<Automaton> members = new ArrayList<>();
        for (String n : names) {
            members.add(literal(jsonText(n))
                    .concatenate(colon())
                    .concatenate(value(props.get(n), at + ".properties." + n)));
        }
        // rest[i][c]: the members from i on; c: a comma goes before the next one written
        Automaton[][] rest = new Automaton[names.size() + 1][2];
        rest[names.size()][0] = Automaton.makeEmptyString();
        rest[names.size()][1] = Automaton.makeEmptyString();
        for (int i = names.size() - 1; i >= 0; i--) {
            for (int c = 0; c < 2; c++) {
                Automaton write = (c == 1 ? comma() : Automaton.makeEmptyString())
                        .concatenate(members.get(i))
                        .concatenate(rest[i + 1][1]);
                rest[i][c] = required.contains(names.get(i)) ? write : write.union(rest[i + 1][c]);
            }
        }
        return literal("{").concatenate(rest[0][0]).concatenate(literal("}"));
    }

    private static String jsonText(String s) {
        return PyJson.dumps(s, null, null, false);
    }

    /** {@code {}} or {@code {"k": v, ...}} with any keys (or {@code keys}' when not empty) and values {@code v}. */
    private static Automaton members(Automaton keys, Automaton v) {
        Automaton member =
                (keys.isEmpty() ? stringBody(0, -1) : keys).concatenate(colon()).concatenate(v);
        return literal("{")
                .concatenate(
                        member.concatenate(comma().concatenate(member).repeat()).optional())
                .concatenate(literal("}"));
    }

    private Automaton array(JsonNode s, String at) {
        JsonNode items = s.get("items");
        Automaton item = items == null ? any(ANY_DEPTH) : value(items, at + ".items");
        int min = s.path("minItems").asInt(0);
        int max = s.has("maxItems") ? s.get("maxItems").asInt() : -1;
        if (min < 0 || (max >= 0 && max < min))
            throw new SchemaException(at + ".maxItems", "minItems/maxItems do not allow any array");
        return list(item, min, max);
    }

    private static Automaton list(Automaton item, int min, int max) {
        Automaton more = comma().concatenate(item);
        Automaton body;
        if (max == 0) {
            body = Automaton.makeEmptyString();
        } else {
            Automaton tail = max < 0 ? more.repeat(Math.max(0, min - 1)) : more.repeat(Math.max(0, min - 1), max - 1);
            body = item.concatenate(tail);
            if (min == 0) body = body.optional();
        }
        return literal("[").concatenate(body).concatenate(literal("]"));
    }

    private static Automaton string(JsonNode s, String at) {
        int min = s.path("minLength").asInt(0);
        int max = s.has("maxLength") ? s.get("maxLength").asInt() : -1;
        if (min < 0 || (max >= 0 && max < min))
            throw new SchemaException(at + ".maxLength", "minLength/maxLength do not allow any string");
        return stringBody(min, max);
    }

    /** A JSON string of min..max characters (max -1: any). */
    static Automaton stringBody(int min, int max) {
        Automaton plain = Automaton.makeCharRange(' ', '!')
                .union(Automaton.makeCharRange('#', '['))
                .union(Automaton.makeCharRange(']', '\u007f'));
        Automaton utf8 = utf8Char();
        Automaton hex = Automaton.makeCharSet("0123456789abcdefABCDEF");
        Automaton escape = literal("\\")
                .concatenate(
                        Automaton.makeCharSet("\"\\/bfnrt").union(literal("u").concatenate(hex.repeat(4, 4))));
        Automaton ch = plain.union(utf8).union(escape);
        Automaton body = max < 0 ? ch.repeat(min) : ch.repeat(min, max);
        return literal("\"").concatenate(body).concatenate(literal("\""));
    }

    /**
     * One non-ASCII character in well-formed UTF-8 (Unicode's table 3-7): no overlong forms, no surrogates, nothing past
     * U+10FFFF. Anything looser lets a constrained answer write bytes that decode to U+FFFD, one per byte, so a string
     * would break its maxLength and hold no text.
     */
    static Automaton utf8Char() {
        Automaton cont = range(0x80, 0xbf);
        return range(0xc2, 0xdf)
                .concatenate(cont)
                .union(range(0xe0, 0xe0).concatenate(range(0xa0, 0xbf)).concatenate(cont))
                .union(range(0xe1, 0xec).concatenate(cont.repeat(2, 2)))
                .union(range(0xed, 0xed).concatenate(range(0x80, 0x9f)).concatenate(cont))
                .union(range(0xee, 0xef).concatenate(cont.repeat(2, 2)))
                .union(range(0xf0, 0xf0).concatenate(range(0x90, 0xbf)).concatenate(cont.repeat(2, 2)))
                .union(range(0xf1, 0xf3).concatenate(cont.repeat(3, 3)))
                .union(range(0xf4, 0xf4).concatenate(range(0x80, 0x8f)).concatenate(cont.repeat(2, 2)));
    }

    private static Automaton range(int lo, int hi) {
        return Automaton.makeCharRange((char) lo, (char) hi);
    }

    private static Automaton digits(int min, int max) {
        return Automaton.makeCharRange('0', '9').repeat(min, max);
    }

    static Automaton integer() {
        Automaton nat = literal("0").union(Automaton.makeCharRange('1', '9').concatenate(digits(0, 15)));
        return literal("-").optional().concatenate(nat);
    }

    static Automaton number() {
        Automaton frac = literal(".").concatenate(digits(1, 16));
        Automaton exp = Automaton.makeCharSet("eE")
                .concatenate(Automaton.makeCharSet("+-").optional())
                .concatenate(digits(1, 3));
        return integer().concatenate(frac.optional()).concatenate(exp.optional());
    }

    private static Automaton comma() {
        return literal(",").concatenate(literal(" ").optional());
    }

    private static Automaton colon() {
        return literal(":").concatenate(literal(" ").optional());
    }

    /** A value of any type nested at most {@code depth} levels. */
    private Automaton any(int depth) {
        Automaton a = any.get(depth);
        if (a == null) {
            a = stringBody(0, -1)
                    .union(number())
                    .union(literal("true"))
                    .union(literal("false"))
                    .union(literal("null"));
            if (depth > 0) a = a.union(object(depth)).union(list(any(depth - 1), 0, -1));
            a.minimize();
            any.put(depth, a);
        }
        return a.clone();
    }

    private Automaton object(int depth) {
        return members(Automaton.makeEmpty(), any(depth - 1));
    }

    /** The JSON text of a value (const, enum), as Python's json.dumps writes it. */
    private static Automaton json(JsonNode v) {
        return literal(PyJson.dumps(MAPPER.convertValue(v, Object.class), null, null, false));
    }
}
