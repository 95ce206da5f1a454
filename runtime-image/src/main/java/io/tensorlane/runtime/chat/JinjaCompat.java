package io.tensorlane.runtime.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.filter.Filter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Jinja semantics that Jinjava lacks and tool-calling chat templates use, as source rewrites before Jinjava parses a
 * template and as an extra test and filter:
 *
 * <ul>
 *   <li>loop filtering, {@code {% for key, val in tool.items() if key != "return" %}} (Mistral): Jinjava reads the
 *       {@code if} as a conditional expression and drops it. Rewritten into a first loop that collects the items the
 *       condition keeps, then the loop over those, so {@code loop.last}/{@code loop.index} count kept items only, as in
 *       Jinja.
 *   <li>{@code not x|length == 1} (Llama 3.1): Jinja reads {@code not (x|length == 1)}, Jinjava {@code (not x|length)
 *       == 1}; rewritten with the parentheses (the operand a variable path with filters, the other side a literal or
 *       a path).
 *   <li>{@code x is iterable}: true for strings too, as in Python (Llama 3.1 sends a tool result that is a string
 *       through {@code tojson} because of it).
 *   <li>the {@code items} filter of Jinja 3.1 ({@code for k, v in args | items}).
 * </ul>
 */
final class JinjaCompat {
    private static final Pattern FOR_TAG = Pattern.compile("\\{%([-+]?)(\\s*for\\s+)(.+?)(\\s+in\\s+)(.+?)([-+]?)%\\}");
    private static final String PATH = "[A-Za-z_][\\w.]*(?:\\[[^\\]]*\\][\\w.]*)*";
    private static final Pattern NOT_COMPARE = Pattern.compile("\\bnot\\s+(" + PATH
            + "(?:\\s*\\|\\s*\\w+)*)\\s*(==|!=)\\s*(-?\\d+(?:\\.\\d+)?|'[^']*'|\"[^\"]*\"|" + PATH + ")");

    private JinjaCompat() {}

    /** Both rewrites; the result parses in Jinjava with Jinja's meaning. */
    static String rewrite(String t) {
        return rewriteLoopFilters(NOT_COMPARE.matcher(t).replaceAll("not ($1 $2 $3)"));
    }

    /** {@code {% for VARS in SEQ if COND %}} to a collecting loop, then the loop over what it kept. */
    static String rewriteLoopFilters(String t) {
        Matcher m = FOR_TAG.matcher(t);
        StringBuilder out = new StringBuilder();
        int n = 0;
        while (m.find()) {
            String header = m.group(5);
            int at = topLevelIf(header);
            if (at < 0) {
                m.appendReplacement(out, Matcher.quoteReplacement(m.group()));
                continue;
            }
            String vars = m.group(3).trim();
            String seq = header.substring(0, at).trim();
            String cond = header.substring(at + 4).trim();
            String kept = "__tl_kept" + n++;
            String item = vars.contains(",") ? "[" + vars + "]" : vars;
            String replacement = "{%" + m.group(1) + " set " + kept + " = [] %}"
                    + "{% for " + vars + " in " + seq + " %}{% if " + cond + " %}"
                    + "{% set __tl_ignored = __tl_push(" + kept + ", " + item + ") %}{% endif %}{% endfor %}"
                    + "{% for " + vars + " in " + kept + " " + m.group(6) + "%}";
            m.appendReplacement(out, Matcher.quoteReplacement(replacement));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The index of a {@code " if "} outside quotes and brackets, or -1. */
    private static int topLevelIf(String s) {
        Brackets b = new Brackets(0);
        for (int i = 0; i < s.length(); i++) {
            if (b.next(s.charAt(i)) && b.depth() == 0 && s.startsWith(" if ", i)) {
                return i;
            }
        }
        return -1;
    }

    /** Python's iterable: strings, lists, dicts (and arrays). */
    static final class IsIterable implements ExpTest {
        @Override
        public String getName() {
            return "iterable";
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return var instanceof CharSequence
                    || var instanceof Iterable
                    || var instanceof Map
                    || (var != null && var.getClass().isArray());
        }
    }

    /** Jinja's {@code items}: a dict's (key, value) pairs; nothing for an undefined value. */
    static final class Items implements Filter {
        @Override
        public String getName() {
            return "items";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            List<List<Object>> out = new ArrayList<>();
            if (var == null) return out;
            if (!(var instanceof Map)) {
                throw new ChatTemplateException("TypeError: can only get item pairs from a mapping.", false);
            }
            ((Map<?, ?>) var).forEach((k, v) -> out.add(Arrays.asList(k, v)));
            return out;
        }
    }
}
