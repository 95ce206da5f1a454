package io.tensorlane.runtime.chat;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Python {@code str} methods that chat templates call on string values ({@code content.strip()},
 * {@code content.split('</think>')[-1].lstrip('\n')}, ...), with Python's semantics: whitespace is Python's
 * {@code str.isspace()} set (not Java's {@code trim()}), {@code split()} without a separator splits on runs of
 * whitespace and drops empty ends, {@code split(sep)} is literal (not a regex) and keeps empty pieces, optional
 * arguments ({@code chars}, {@code maxsplit}, {@code count}, {@code start}/{@code end}) work as in Python, and a
 * tuple/list of prefixes works for {@code startswith}/{@code endswith}.
 */
public final class PyStr {
    /** Returned by {@link #call} for a method name this class does not implement. */
    public static final Object NOT_A_STR_METHOD = new Object();

    public static final Set<String> METHODS = Set.of(
            "upper",
            "lower",
            "title",
            "capitalize",
            "strip",
            "lstrip",
            "rstrip",
            "startswith",
            "endswith",
            "split",
            "rsplit",
            "replace",
            "find",
            "rfind",
            "count",
            "join",
            "isspace",
            "isdigit",
            "isalpha",
            "isalnum",
            "isupper",
            "islower");

    private PyStr() {}

    /** Calls the Python method {@code name} on {@code s}; {@link #NOT_A_STR_METHOD} when it is not one of ours. */
    public static Object call(String s, String name, Object... args) {
        switch (name) {
            case "upper":
                arity(name, args, 0, 0);
                return s.toUpperCase(Locale.ROOT);
            case "lower":
                arity(name, args, 0, 0);
                return s.toLowerCase(Locale.ROOT);
            case "title":
                arity(name, args, 0, 0);
                return title(s);
            case "capitalize":
                arity(name, args, 0, 0);
                return capitalize(s);
            case "strip":
                arity(name, args, 0, 1);
                return strip(s, charsArg(args), true, true);
            case "lstrip":
                arity(name, args, 0, 1);
                return strip(s, charsArg(args), true, false);
            case "rstrip":
                arity(name, args, 0, 1);
                return strip(s, charsArg(args), false, true);
            case "startswith":
                arity(name, args, 1, 3);
                return affix(s, args, true);
            case "endswith":
                arity(name, args, 1, 3);
                return affix(s, args, false);
            case "split":
                arity(name, args, 0, 2);
                return split(s, strOrNone(args, 0), intArg(args, 1, -1));
            case "rsplit":
                arity(name, args, 0, 2);
                return rsplit(s, strOrNone(args, 0), intArg(args, 1, -1));
            case "replace":
                arity(name, args, 2, 3);
                return replace(s, str(args[0], name), str(args[1], name), intArg(args, 2, -1));
            case "find":
                arity(name, args, 1, 3);
                return find(s, args, false);
            case "rfind":
                arity(name, args, 1, 3);
                return find(s, args, true);
            case "count":
                arity(name, args, 1, 1);
                return count(s, str(args[0], name));
            case "join":
                arity(name, args, 1, 1);
                return join(s, args[0]);
            case "isspace":
                return !s.isEmpty() && s.codePoints().allMatch(PyStr::isSpace);
            case "isdigit":
                return !s.isEmpty() && s.codePoints().allMatch(Character::isDigit);
            case "isalpha":
                return !s.isEmpty() && s.codePoints().allMatch(Character::isLetter);
            case "isalnum":
                return !s.isEmpty() && s.codePoints().allMatch(Character::isLetterOrDigit);
            case "isupper":
                return hasCased(s) && s.equals(s.toUpperCase(Locale.ROOT));
            case "islower":
                return hasCased(s) && s.equals(s.toLowerCase(Locale.ROOT));
            default:
                return NOT_A_STR_METHOD;
        }
    }

    /** Python's {@code str.isspace()} for one code point (Unicode White_Space plus the \x1c-\x1f separators). */
    public static boolean isSpace(int cp) {
        switch (cp) {
            case ' ':
            case '\t':
            case '\n':
            case 0x0b:
            case '\f':
            case '\r':
            case 0x1c:
            case 0x1d:
            case 0x1e:
            case 0x1f:
            case 0x85:
            case 0xa0:
            case 0x1680:
            case 0x2028:
            case 0x2029:
            case 0x202f:
            case 0x205f:
            case 0x3000:
                return true;
            default:
                return cp >= 0x2000 && cp <= 0x200a;
        }
    }

    public static String strip(String s, String chars, boolean left, boolean right) {
        int[] cps = s.codePoints().toArray();
        int from = 0;
        int to = cps.length;
        while (left && from < to && stripped(cps[from], chars)) from++;
        while (right && to > from && stripped(cps[to - 1], chars)) to--;
        return new String(cps, from, to - from);
    }

    private static boolean stripped(int cp, String chars) {
        return chars == null ? isSpace(cp) : chars.codePoints().anyMatch(c -> c == cp);
    }

    public static List<String> split(String s, String sep, int maxsplit) {
        List<String> out = new ArrayList<>();
        if (sep == null) {
            int[] cps = s.codePoints().toArray();
            int i = 0;
            while (true) {
                while (i < cps.length && isSpace(cps[i])) i++;
                if (i >= cps.length) return out;
                if (maxsplit >= 0 && out.size() == maxsplit) {
                    out.add(new String(cps, i, cps.length - i));
                    return out;
                }
                int j = i;
                while (j < cps.length && !isSpace(cps[j])) j++;
                out.add(new String(cps, i, j - i));
                i = j;
            }
        }
        if (sep.isEmpty()) throw new ChatTemplateException("ValueError: empty separator", false);
        int start = 0;
        int at;
        while ((maxsplit < 0 || out.size() < maxsplit) && (at = s.indexOf(sep, start)) >= 0) {
            out.add(s.substring(start, at));
            start = at + sep.length();
        }
        out.add(s.substring(start));
        return out;
    }

    public static List<String> rsplit(String s, String sep, int maxsplit) {
        if (maxsplit < 0) return split(s, sep, -1);
        List<String> rev = new ArrayList<>();
        String rest = s;
        if (sep == null) {
            rest = strip(rest, null, false, true);
            while (!rest.isEmpty() && rev.size() < maxsplit) {
                int j = rest.length();
                int i = j;
                while (i > 0 && !isSpace(rest.codePointBefore(i))) i -= Character.charCount(rest.codePointBefore(i));
                if (i == 0) break;
                rev.add(0, rest.substring(i, j));
                rest = strip(rest.substring(0, i), null, false, true);
            }
            if (!strip(rest, null, true, false).isEmpty())
                rev.add(0, rev.size() < maxsplit ? strip(rest, null, true, false) : rest);
            return rev;
        }
        if (sep.isEmpty()) throw new ChatTemplateException("ValueError: empty separator", false);
        int at;
        while (rev.size() < maxsplit && (at = rest.lastIndexOf(sep)) >= 0) {
            rev.add(0, rest.substring(at + sep.length()));
            rest = rest.substring(0, at);
        }
        rev.add(0, rest);
        return rev;
    }

    public static String replace(String s, String old, String rep, int count) {
        if (count == 0) return s;
        StringBuilder b = new StringBuilder();
        int n = 0;
        if (old.isEmpty()) { // Python inserts rep before every code point and at the end
            int i = 0;
            while (i < s.length() && (count < 0 || n < count)) {
                b.append(rep);
                n++;
                int cp = s.codePointAt(i);
                b.appendCodePoint(cp);
                i += Character.charCount(cp);
            }
            if (count < 0 || n < count)
                return b.append(s, i, s.length()).append(rep).toString();
            return b.append(s, i, s.length()).toString();
        }
        int start = 0;
        int at;
        while ((count < 0 || n < count) && (at = s.indexOf(old, start)) >= 0) {
            b.append(s, start, at).append(rep);
            start = at + old.length();
            n++;
        }
        return b.append(s, start, s.length()).toString();
    }

    /** CPython's tailmatch: start/end adjusted like a slice, but a start past the end matches nothing. */
    private static boolean affix(String s, Object[] args, boolean prefix) {
        int n = s.length();
        int start = args.length > 1 && args[1] != null ? toInt(args[1]) : 0;
        int end = args.length > 2 && args[2] != null ? toInt(args[2]) : n;
        if (end > n) end = n;
        else if (end < 0) end = Math.max(0, end + n);
        if (start < 0) start = Math.max(0, start + n);
        Collection<?> options = args[0] instanceof Collection ? (Collection<?>) args[0] : List.of(args[0]);
        for (Object o : options) {
            String a = str(o, prefix ? "startswith" : "endswith");
            int last = end - a.length();
            if (last < start) continue;
            if (s.startsWith(a, prefix ? start : last)) return true;
        }
        return false;
    }

    private static int find(String s, Object[] args, boolean last) {
        String sub = str(args[0], last ? "rfind" : "find");
        int[] range = range(s, args, 1);
        if (range[0] > range[1] || range[0] > s.length()) return -1;
        String window = s.substring(range[0], range[1]);
        int at = last ? window.lastIndexOf(sub) : window.indexOf(sub);
        return at < 0 ? -1 : at + range[0];
    }

    /** Python slice bounds {@code [start:end]} from optional arguments at {@code args[i]}, {@code args[i+1]}. */
    private static int[] range(String s, Object[] args, int i) {
        int n = s.length();
        int start = args.length > i && args[i] != null ? clamp(toInt(args[i]), n) : 0;
        int end = args.length > i + 1 && args[i + 1] != null ? clamp(toInt(args[i + 1]), n) : n;
        return new int[] {start, end};
    }

    private static int clamp(int v, int n) {
        if (v < 0) v += n;
        return Math.max(0, Math.min(v, n));
    }

    private static int count(String s, String sub) {
        if (sub.isEmpty()) return s.codePointCount(0, s.length()) + 1;
        int n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) n++;
        return n;
    }

    private static String join(String sep, Object items) {
        if (!(items instanceof Iterable)) {
            throw new ChatTemplateException("TypeError: can only join an iterable", false);
        }
        List<String> parts = new ArrayList<>();
        for (Object o : (Iterable<?>) items) parts.add(str(o, "join"));
        return String.join(sep, parts);
    }

    private static String title(String s) {
        StringBuilder b = new StringBuilder();
        boolean prevCased = false;
        for (int cp : s.codePoints().toArray()) {
            b.appendCodePoint(prevCased ? Character.toLowerCase(cp) : Character.toTitleCase(cp));
            prevCased = isCased(cp);
        }
        return b.toString();
    }

    private static String capitalize(String s) {
        if (s.isEmpty()) return s;
        int first = s.codePointAt(0);
        return new StringBuilder()
                .appendCodePoint(Character.toTitleCase(first))
                .append(s.substring(Character.charCount(first)).toLowerCase(Locale.ROOT))
                .toString();
    }

    private static boolean isCased(int cp) {
        return Character.isUpperCase(cp) || Character.isLowerCase(cp) || Character.isTitleCase(cp);
    }

    private static boolean hasCased(String s) {
        return s.codePoints().anyMatch(PyStr::isCased);
    }

    private static void arity(String name, Object[] args, int min, int max) {
        if (args.length < min || args.length > max) {
            throw new ChatTemplateException(
                    "TypeError: str." + name + "() takes " + (min == max ? "" + min : min + " to " + max)
                            + " arguments (" + args.length + " given)",
                    false);
        }
    }

    private static String charsArg(Object[] args) {
        return strOrNone(args, 0);
    }

    private static String strOrNone(Object[] args, int i) {
        return args.length > i && args[i] != null ? str(args[i], "str method") : null;
    }

    private static int intArg(Object[] args, int i, int dflt) {
        return args.length > i && args[i] != null ? toInt(args[i]) : dflt;
    }

    private static int toInt(Object o) {
        if (o instanceof Number) return ((Number) o).intValue();
        throw new ChatTemplateException("TypeError: an integer is required, got " + o, false);
    }

    private static String str(Object o, String where) {
        if (o instanceof CharSequence) return o.toString();
        if (o != null && o.getClass().getSimpleName().equals("SafeString")) return o.toString();
        throw new ChatTemplateException(
                "TypeError: " + where + " expects str, got "
                        + (o == null ? "None" : o.getClass().getSimpleName()),
                false);
    }
}
