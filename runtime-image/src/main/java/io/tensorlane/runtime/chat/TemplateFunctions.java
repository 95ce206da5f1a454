package io.tensorlane.runtime.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import java.time.Clock;
import java.time.ZonedDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The globals and filters transformers adds to its chat-template environment, for Jinjava: {@code raise_exception},
 * {@code strftime_now}, {@code tojson} (Python json.dumps) and {@code trim} (Python str.strip), plus
 * {@code __tl_slice}, the target of the rewrite of stepped slices ({@code messages[::-1]}) Jinjava cannot parse.
 */
public final class TemplateFunctions {
    /** The clock {@code strftime_now} reads during the current render (set by {@link ChatTemplate}). */
    static final ThreadLocal<Clock> CLOCK = ThreadLocal.withInitial(Clock::systemDefaultZone);
    /** The message of a raise_exception call during the current render: Jinjava may swallow the exception. */
    static final ThreadLocal<String> RAISED = new ThreadLocal<>();

    private TemplateFunctions() {}

    /** Thrown by the template's {@code raise_exception(msg)}. */
    static final class Raised extends RuntimeException {
        Raised(String message) {
            super(message, null, false, false);
        }
    }

    public static Object raiseException(Object message) {
        String m = String.valueOf(message);
        RAISED.set(m);
        throw new Raised(m);
    }

    public static String strftimeNow(String format) {
        return strftime(ZonedDateTime.now(CLOCK.get()), format);
    }

    /** Python's strftime for the directives chat templates use (C/POSIX locale). */
    public static String strftime(ZonedDateTime t, String format) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                b.append(c);
                continue;
            }
            char d = format.charAt(++i);
            switch (d) {
                case 'd':
                    b.append(String.format("%02d", t.getDayOfMonth()));
                    break;
                case 'm':
                    b.append(String.format("%02d", t.getMonthValue()));
                    break;
                case 'Y':
                    b.append(t.getYear());
                    break;
                case 'y':
                    b.append(String.format("%02d", t.getYear() % 100));
                    break;
                case 'b':
                    b.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.US));
                    break;
                case 'B':
                    b.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.US));
                    break;
                case 'a':
                    b.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.US));
                    break;
                case 'A':
                    b.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.US));
                    break;
                case 'H':
                    b.append(String.format("%02d", t.getHour()));
                    break;
                case 'I':
                    b.append(String.format("%02d", (t.getHour() + 11) % 12 + 1));
                    break;
                case 'p':
                    b.append(t.getHour() < 12 ? "AM" : "PM");
                    break;
                case 'M':
                    b.append(String.format("%02d", t.getMinute()));
                    break;
                case 'S':
                    b.append(String.format("%02d", t.getSecond()));
                    break;
                case 'j':
                    b.append(String.format("%03d", t.getDayOfYear()));
                    break;
                case 'e':
                    b.append(String.format("%2d", t.getDayOfMonth()));
                    break;
                case '%':
                    b.append('%');
                    break;
                default:
                    b.append('%').append(d);
            }
        }
        return b.toString();
    }

    /** The target of {@link JinjaCompat}'s loop-filter rewrite: appends to a list the rewritten template made. */
    @SuppressWarnings("unchecked")
    public static String push(Object list, Object item) {
        if (!(list instanceof List)) throw new ChatTemplateException("__tl_push on " + list, false);
        ((List<Object>) list).add(item);
        return "";
    }

    /** Python {@code seq[start:stop:step]} on a list or string. */
    public static Object slice(Object seq, Object start, Object stop, Object step) {
        List<Object> items = new ArrayList<>();
        boolean string = seq instanceof CharSequence;
        if (string) seq.toString().codePoints().forEach(items::add);
        else if (seq instanceof Object[]) items.addAll(Arrays.asList((Object[]) seq));
        else if (seq instanceof Iterable) ((Iterable<?>) seq).forEach(items::add);
        else throw new ChatTemplateException("TypeError: object is not subscriptable: " + seq, false);
        int n = items.size();
        int st = step == null ? 1 : ((Number) step).intValue();
        if (st == 0) throw new ChatTemplateException("ValueError: slice step cannot be zero", false);
        int lo = st > 0 ? 0 : -1;
        int hi = st > 0 ? n : n - 1;
        int a = start == null ? (st > 0 ? 0 : n - 1) : bound(((Number) start).intValue(), n, lo, hi);
        int z = stop == null ? (st > 0 ? n : -1) : bound(((Number) stop).intValue(), n, lo, hi);
        List<Object> out = new ArrayList<>();
        for (int i = a; st > 0 ? i < z : i > z; i += st) out.add(items.get(i));
        if (!string) return out;
        StringBuilder b = new StringBuilder();
        out.forEach(cp -> b.appendCodePoint((Integer) cp));
        return b.toString();
    }

    private static int bound(int v, int n, int lo, int hi) {
        if (v < 0) v += n;
        return Math.max(lo, Math.min(v, hi));
    }

    /** transformers' tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False). */
    static final class ToJson implements Filter {
        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, (Object[]) args, Map.of());
        }

        @Override
        @SuppressWarnings("unchecked")
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object indent = kwargs.containsKey("indent") ? kwargs.get("indent") : args.length > 1 ? args[1] : null;
            Object seps = kwargs.get("separators");
            boolean sort = Boolean.TRUE.equals(kwargs.get("sort_keys"));
            if (Boolean.TRUE.equals(kwargs.get("ensure_ascii")) || args.length > 0 && Boolean.TRUE.equals(args[0])) {
                throw new ChatTemplateException("tojson(ensure_ascii=True) is not supported", false);
            }
            List<String> separators = null;
            if (seps instanceof List) {
                separators = new ArrayList<>();
                for (Object o : (List<Object>) seps) separators.add(String.valueOf(o));
            }
            return PyJson.dumps(var, indent, separators, sort);
        }
    }

    /** Jinja's trim: str.strip(chars) with Python's whitespace. */
    static final class Trim implements Filter {
        @Override
        public String getName() {
            return "trim";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            if (var == null) return "";
            return PyStr.strip(var.toString(), args.length > 0 ? args[0] : null, true, true);
        }
    }
}
