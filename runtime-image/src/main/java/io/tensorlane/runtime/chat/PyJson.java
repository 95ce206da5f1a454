package io.tensorlane.runtime.chat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Python's {@code json.dumps(x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)}, the
 * {@code tojson} filter transformers installs for chat templates: {@code ", "}/{@code ": "} separators (compact
 * {@code ","} between items when indented), non-ASCII text as is, only {@code "}, {@code \}, and control characters
 * escaped, Python's float repr.
 */
public final class PyJson {
    private PyJson() {}

    /**
     * @param indent null (one line), an Integer (spaces per level; 0 means newlines without indentation) or a String
     * @param separators null for Python's defaults, else {item, key} separators
     */
    public static String dumps(Object value, Object indent, List<String> separators, boolean sortKeys) {
        String unit = indent == null
                ? null
                : indent instanceof Number ? " ".repeat(Math.max(0, ((Number) indent).intValue())) : indent.toString();
        String itemSep = separators != null ? separators.get(0) : unit == null ? ", " : ",";
        String keySep = separators != null ? separators.get(1) : ": ";
        StringBuilder b = new StringBuilder();
        write(b, value, unit, itemSep, keySep, sortKeys, 0);
        return b.toString();
    }

    private static void write(
            StringBuilder b, Object v, String unit, String itemSep, String keySep, boolean sort, int depth) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof Boolean) {
            b.append((Boolean) v ? "true" : "false");
        } else if (v instanceof Double || v instanceof Float) {
            b.append(floatRepr(((Number) v).doubleValue()));
        } else if (v instanceof Number) {
            b.append(v);
        } else if (v instanceof Map) {
            List<Map.Entry<?, ?>> entries = new ArrayList<>(((Map<?, ?>) v).entrySet());
            if (sort) entries.sort((x, y) -> String.valueOf(x.getKey()).compareTo(String.valueOf(y.getKey())));
            if (entries.isEmpty()) {
                b.append("{}");
                return;
            }
            b.append('{');
            for (int i = 0; i < entries.size(); i++) {
                if (i > 0) b.append(itemSep);
                newline(b, unit, depth + 1);
                Object k = entries.get(i).getKey();
                string(b, k instanceof Boolean ? ((Boolean) k ? "true" : "false") : k == null ? "null" : k.toString());
                b.append(keySep);
                write(b, entries.get(i).getValue(), unit, itemSep, keySep, sort, depth + 1);
            }
            newline(b, unit, depth);
            b.append('}');
        } else if (v instanceof Iterable || v instanceof Object[]) {
            List<Object> items = new ArrayList<>();
            if (v instanceof Object[]) items.addAll(List.of((Object[]) v));
            else ((Iterable<?>) v).forEach(items::add);
            if (items.isEmpty()) {
                b.append("[]");
                return;
            }
            b.append('[');
            for (int i = 0; i < items.size(); i++) {
                if (i > 0) b.append(itemSep);
                newline(b, unit, depth + 1);
                write(b, items.get(i), unit, itemSep, keySep, sort, depth + 1);
            }
            newline(b, unit, depth);
            b.append(']');
        } else {
            string(b, v.toString());
        }
    }

    private static void newline(StringBuilder b, String unit, int depth) {
        if (unit != null) b.append('\n').append(unit.repeat(depth));
    }

    private static void string(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            escape(b, s.charAt(i));
        }
        b.append('"');
    }

    /** One character of a string's body as {@code json.dumps(ensure_ascii=False)} writes it (char by char). */
    static void escape(StringBuilder b, char c) {
        switch (c) {
            case '"':
                b.append("\\\"");
                break;
            case '\\':
                b.append("\\\\");
                break;
            case '\n':
                b.append("\\n");
                break;
            case '\r':
                b.append("\\r");
                break;
            case '\t':
                b.append("\\t");
                break;
            case '\b':
                b.append("\\b");
                break;
            case '\f':
                b.append("\\f");
                break;
            default:
                if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                else b.append(c);
        }
    }

    /** Python's {@code repr(float)}: shortest round-trip digits, exponent form below 1e-4 and from 1e16. */
    static String floatRepr(double d) {
        if (Double.isNaN(d)) return "NaN";
        if (Double.isInfinite(d)) return d > 0 ? "Infinity" : "-Infinity";
        if (d == 0) return (1 / d < 0) ? "-0.0" : "0.0";
        BigDecimal bd = new BigDecimal(Double.toString(d)).stripTrailingZeros();
        String digits = bd.unscaledValue().abs().toString();
        int exp = digits.length() - 1 - bd.scale(); // decimal exponent of the first digit
        String sign = d < 0 ? "-" : "";
        if (exp < -4 || exp >= 16) {
            String mant = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
            return sign + mant + "e" + (exp < 0 ? "-" : "+") + String.format("%02d", Math.abs(exp));
        }
        String plain = bd.abs().toPlainString();
        return sign + (plain.contains(".") ? plain : plain + ".0");
    }
}
