package io.tensorlane.runtime.chat;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jinjava.javax.el.CompositeELResolver;

/**
 * A Hugging Face chat template (the {@code chat_template} of tokenizer_config.json) rendered the way transformers'
 * {@code apply_chat_template(messages, tokenize=False, add_generation_prompt=...)} renders it, on Jinjava: an
 * environment with trim_blocks and lstrip_blocks, {@code raise_exception}, {@code strftime_now}, Python's
 * {@code tojson}, loop controls, {@code namespace()}, Python {@code str} methods on strings ({@link PyStr}) and
 * {@code dict.items()/get()}, loop filters ({@code for x in xs if cond}), the {@code items} filter and Python's
 * {@code is iterable} ({@link JinjaCompat}). Undefined variables render empty, as with Jinja's default Undefined.
 *
 * <p>The context holds what transformers passes: {@code messages}, {@code tools} (the function schemas, or None),
 * {@code documents} (or None), {@code add_generation_prompt}, the tokenizer's {@code bos_token}/{@code eos_token}, and
 * then the extra context (a request's {@code chat_template_kwargs}, e.g. Qwen3's {@code enable_thinking}), which may
 * override any of them.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class ChatTemplate {
    private static final Jinjava JINJAVA = newJinjava();
    /** {@code operand[start:stop:step]}: Jinjava's parser takes {@code [a:b]} but not a step. */
    private static final Pattern STEP_SLICE =
            Pattern.compile("\\[\\s*(-?\\d*)\\s*:\\s*(-?\\d*)\\s*:\\s*(-?\\d+)\\s*\\]");

    /**
     * {@code not x is defined}: Jinja reads {@code not (x is defined)}, Jinjava {@code (not x) is defined}; the
     * operand is a plain variable/attribute/subscript path.
     */
    private static final Pattern NOT_IS =
            Pattern.compile("\\bnot\\s+([A-Za-z_][\\w.]*(?:\\[[^\\]]*\\][\\w.]*)*)\\s+is\\s+(not\\s+)?(\\w+)");

    private final String source;
    private final String rewritten;
    private final String bosToken;
    private final String eosToken;
    private final Clock clock;

    private ChatTemplate(String source, String rewritten, String bosToken, String eosToken, Clock clock) {
        this.source = source;
        this.rewritten = rewritten;
        this.bosToken = bosToken;
        this.eosToken = eosToken;
        this.clock = clock;
    }

    /** Compiles a template with no special tokens (bos_token/eos_token undefined, as for a tokenizer without them). */
    public static ChatTemplate compile(String template) {
        return compile(template, null, null);
    }

    /**
     * Compiles a template; bosToken/eosToken are the tokenizer config's strings (null: not defined).
     *
     * @throws ChatTemplateException on a syntax error
     */
    public static ChatTemplate compile(String template, String bosToken, String eosToken) {
        String rewritten = rewriteStepSlices(template);
        JinjavaInterpreter interpreter = JINJAVA.newInterpreter();
        interpreter.parse(rewritten);
        for (TemplateError e : interpreter.getErrorsCopy()) {
            if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new ChatTemplateException("chat template does not compile: " + e.getMessage(), false);
            }
        }
        return new ChatTemplate(template, rewritten, bosToken, eosToken, Clock.systemDefaultZone());
    }

    /** This template with {@code strftime_now} reading the given clock (tests, reproducible prompts). */
    public ChatTemplate withClock(Clock clock) {
        return new ChatTemplate(source, rewritten, bosToken, eosToken, clock);
    }

    public String source() {
        return source;
    }

    /**
     * Renders the prompt.
     *
     * @param messages the conversation, each a map with at least {@code role} and {@code content}
     * @param extraContext further template variables (chat_template_kwargs); may be null
     * @throws ChatTemplateException when the template raises (raise_exception) or fails
     */
    public String render(
            List<Map<String, Object>> messages, boolean addGenerationPrompt, Map<String, Object> extraContext) {
        return render(messages, null, null, addGenerationPrompt, extraContext);
    }

    /**
     * Renders the prompt with tools and documents, as {@code apply_chat_template(messages, tools=..., documents=...)}.
     *
     * @param messages the conversation; assistant messages may carry {@code tool_calls} (arguments as objects), tool
     *     messages {@code tool_call_id}
     * @param tools the function schemas ({@code {"type": "function", "function": {...}}}), or null for None
     * @param documents the documents (objects), or null for None
     * @param extraContext further template variables (chat_template_kwargs); may be null
     * @throws ChatTemplateException when the template raises (raise_exception) or fails
     */
    public String render(
            List<Map<String, Object>> messages,
            List<Map<String, Object>> tools,
            List<Map<String, Object>> documents,
            boolean addGenerationPrompt,
            Map<String, Object> extraContext) {
        Map<String, Object> ctx = new LinkedHashMap<>();
        ctx.put("messages", messages);
        ctx.put("tools", tools);
        ctx.put("documents", documents);
        ctx.put("add_generation_prompt", addGenerationPrompt);
        if (bosToken != null) ctx.put("bos_token", bosToken);
        if (eosToken != null) ctx.put("eos_token", eosToken);
        // the globals are defined in Jinja ({% if strftime_now is defined %}); Jinjava functions are not variables
        ctx.put("strftime_now", "<function strftime_now>");
        ctx.put("raise_exception", "<function raise_exception>");
        if (extraContext != null) ctx.putAll(extraContext);
        TemplateFunctions.CLOCK.set(clock);
        TemplateFunctions.RAISED.remove();
        try {
            RenderResult r = JINJAVA.renderForResult(rewritten, ctx);
            String raised = TemplateFunctions.RAISED.get();
            if (raised != null) throw new ChatTemplateException(raised, true);
            for (TemplateError e : r.getErrors()) {
                ChatTemplateException cause = find(e.getException());
                if (cause != null) throw cause;
            }
            for (TemplateError e : r.getErrors()) {
                if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
                    throw new ChatTemplateException("chat template failed: " + e.getMessage(), false);
                }
            }
            return r.getOutput();
        } finally {
            TemplateFunctions.CLOCK.remove();
            TemplateFunctions.RAISED.remove();
        }
    }

    private static ChatTemplateException find(Throwable t) {
        for (int depth = 0; t != null && depth < 20; t = t.getCause(), depth++) {
            if (t instanceof ChatTemplateException) return (ChatTemplateException) t;
        }
        return null;
    }

    /** Rewrites {@code x[a:b:c]} to {@code __tl_slice(x, a, b, c)}, x being the primary expression before it. */
    static String rewriteStepSlices(String t) {
        t = JinjaCompat.rewrite(t);
        t = NOT_IS.matcher(t).replaceAll("not ($1 is $2$3)");
        t = parenthesizeNamespaceArgs(t);
        Matcher m = STEP_SLICE.matcher(t);
        StringBuilder out = new StringBuilder(t);
        int shift = 0;
        while (m.find()) {
            int end = m.start() + shift;
            int begin = operandStart(out, end);
            if (begin == end) continue;
            String operand = out.substring(begin, end);
            String call = "__tl_slice(" + operand + ", " + arg(m.group(1)) + ", " + arg(m.group(2)) + ", "
                    + arg(m.group(3)) + ")";
            out.replace(begin, m.end() + shift, call);
            shift += call.length() - (m.end() - m.start()) - operand.length();
        }
        return out.toString();
    }

    /**
     * {@code namespace(i=messages|length - 1)}: Jinjava binds the named parameter before the {@code -}; each value of
     * a namespace(...) call is parenthesized.
     */
    static String parenthesizeNamespaceArgs(String t) {
        StringBuilder out = new StringBuilder();
        int from = 0;
        for (int at = t.indexOf("namespace(", from); at >= 0; at = t.indexOf("namespace(", from)) {
            int open = at + "namespace(".length();
            out.append(t, from, open);
            Brackets b = new Brackets(1);
            int i = open;
            int argStart = open;
            for (; i < t.length() && b.depth() > 0; i++) {
                char c = t.charAt(i);
                if (b.next(c) && ((b.depth() == 1 && c == ',') || b.depth() == 0)) {
                    out.append(namedArg(t.substring(argStart, i))).append(c);
                    argStart = i + 1;
                }
            }
            from = i;
        }
        return out.append(t.substring(from)).toString();
    }

    private static String namedArg(String a) {
        Matcher m = Pattern.compile("^(\\s*[A-Za-z_]\\w*\\s*=)(?!=)(.*)$", Pattern.DOTALL)
                .matcher(a);
        return m.matches() && !m.group(2).isBlank() ? m.group(1) + "(" + m.group(2) + ")" : a;
    }

    private static String arg(String g) {
        return g.isEmpty() ? "none" : g;
    }

    private static int operandStart(CharSequence s, int end) {
        int i = end;
        while (i > 0) {
            char c = s.charAt(i - 1);
            if (Character.isLetterOrDigit(c) || c == '_' || c == '.') {
                i--;
            } else if (c == '\'' || c == '"') { // a string literal operand
                i--;
                while (i > 0 && s.charAt(i - 1) != c) i--;
                if (i > 0) i--;
            } else if (c == ')' || c == ']') {
                char open = c == ')' ? '(' : '[';
                int depth = 0;
                while (i > 0) {
                    char d = s.charAt(--i);
                    if (d == c) depth++;
                    else if (d == open && --depth == 0) break;
                }
            } else {
                break;
            }
        }
        return i;
    }

    private static Jinjava newJinjava() {
        CompositeELResolver resolver = new CompositeELResolver();
        resolver.add(new PyMethodResolver());
        resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
        Jinjava j = new Jinjava(JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
                .withElResolver(resolver)
                // Jinja does not render the output of an expression again ({{ '{{"name": ...}}' }} in Qwen2.5's)
                .withNestedInterpretationEnabled(false)
                // Jinja's semantics where Jinjava kept its legacy ones: {{- -}} trimming, operator precedence (a filter
                // binds tighter than +), iterating a dict yields its keys, dict literal keys are expressions, ...
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withUseTrimmingForNotesAndExpressions(true)
                        .withParseWhitespaceControlStrictly(true)
                        .withUseNaturalOperatorPrecedence(true)
                        .withIterateOverMapKeys(true)
                        .withEvaluateMapKeys(true)
                        .withKeepNullableLoopValues(true)
                        .build())
                .build());
        try {
            j.getGlobalContext()
                    .registerFunction(new ELFunctionDefinition(
                            "", "raise_exception", TemplateFunctions.class.getMethod("raiseException", Object.class)));
            j.getGlobalContext()
                    .registerFunction(new ELFunctionDefinition(
                            "", "strftime_now", TemplateFunctions.class.getMethod("strftimeNow", String.class)));
            j.getGlobalContext()
                    .registerFunction(new ELFunctionDefinition(
                            "",
                            "__tl_slice",
                            TemplateFunctions.class.getMethod(
                                    "slice", Object.class, Object.class, Object.class, Object.class)));
            j.getGlobalContext()
                    .registerFunction(new ELFunctionDefinition(
                            "", "__tl_push", TemplateFunctions.class.getMethod("push", Object.class, Object.class)));
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(e);
        }
        j.getGlobalContext().registerExpTest(new JinjaCompat.IsIterable());
        j.getGlobalContext().registerFilter(new JinjaCompat.Items());
        j.getGlobalContext().registerFilter(new TemplateFunctions.ToJson());
        j.getGlobalContext().registerFilter(new TemplateFunctions.Trim());
        return j;
    }
}
