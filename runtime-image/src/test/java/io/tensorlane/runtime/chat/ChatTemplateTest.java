package io.tensorlane.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Environment behaviour; expected strings were printed by jinja2 3.1.6 in transformers' environment. */
class ChatTemplateTest {
    private static String render(String template, Map<String, Object> ctx) {
        return ChatTemplate.compile(template).render(List.of(), false, ctx);
    }

    @Test
    void raiseExceptionSurfacesTheTemplatesMessage() {
        String t = "{% for m in messages %}{% if m.role == 'tool' %}"
                + "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
                + "{% endif %}{{ m.content }}{% endfor %}";
        List<Map<String, Object>> msgs =
                List.of(Map.of("role", "user", "content", "a"), Map.of("role", "tool", "content", "b"));
        assertThatThrownBy(() -> ChatTemplate.compile(t).render(msgs, true, null))
                .isInstanceOfSatisfying(
                        ChatTemplateException.class,
                        e -> assertThat(e.raisedByTemplate()).isTrue())
                .hasMessage("Conversation roles must alternate user/assistant/user/assistant/...");
    }

    @Test
    void undefinedRendersEmptyLikeJinjasDefaultUndefined() {
        assertThat(render(
                        "[{{ undefined_var }}]|{{ x.missing }}|{{ undefined_var is defined }}", Map.of("x", Map.of())))
                .isEqualToIgnoringCase("[]||False");
    }

    @Test
    void tojsonIsPythonJsonDumps() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("a", Arrays.asList(1, 2.5, "é\n\"", null, true));
        d.put("b", Map.of());
        d.put("c", List.of());
        assertThat(render("{{ d | tojson }}|{{ d | tojson(indent=2) }}", Map.of("d", d)))
                .isEqualTo(
                        "{\"a\": [1, 2.5, \"é\\n\\\"\", null, true], \"b\": {}, \"c\": []}|{\n  \"a\": [\n    1,\n    2.5,\n"
                                + "    \"é\\n\\\"\",\n    null,\n    true\n  ],\n  \"b\": {},\n  \"c\": []\n}");
    }

    @Test
    void dictItemsAndGet() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("a", 1);
        d.put("b", "x");
        assertThat(render(
                        "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{{ d.get('z', 'dflt') }}"
                                + "{{ d.get('a') }}",
                        Map.of("d", d)))
                .isEqualTo("a=1;b=x;dflt1");
    }

    @Test
    void strMethodsAndSteppedSlicesInTemplates() {
        assertThat(render(
                        "{{ 'a,b,,c'.split(',') | join('|') }}/{{ '  x  y '.split() | length }}/"
                                + "{{ l[::-1] | join }}/{{ l[::2] | join }}/{{ 'abc'[::-1] }}",
                        Map.of("l", List.of(1, 2, 3, 4))))
                .isEqualTo("a|b||c/2/4321/13/cba");
        assertThat(render(
                        "{{ '  hi\u3000'.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ 'hello world'.title() }}|"
                                + "{{ 'aaa'.replace('a','b',2) }}|{{ 'ab'.startswith(('x','a')) }}",
                        Map.of()))
                .isEqualToIgnoringCase("hi|hi|Hello World|bba|True");
    }

    @Test
    void mutatingAListIsRefusedAsInTheSandbox() {
        assertThatThrownBy(() -> render("{% set l = [] %}{{ l.append(1) }}", Map.of()))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("access to attribute 'append' of 'list' object is unsafe");
    }

    @Test
    void syntaxErrorsFailAtCompile() {
        assertThatThrownBy(() -> ChatTemplate.compile("{% if %}")).isInstanceOf(ChatTemplateException.class);
    }

    @Test
    void rewritesOnlyWhatJinjavaCannotParse() {
        assertThat(ChatTemplate.rewriteStepSlices("{% for m in messages[::-1] %}"))
                .isEqualTo("{% for m in __tl_slice(messages, none, none, -1) %}");
        assertThat(ChatTemplate.rewriteStepSlices("{% if not x.y is defined %}"))
                .isEqualTo("{% if not (x.y is defined) %}");
        assertThat(ChatTemplate.rewriteStepSlices("namespace(a=true, b=l|length - 1)"))
                .isEqualTo("namespace(a=(true), b=(l|length - 1))");
    }

    @Test
    void loopFiltersCountOnlyKeptItems() {
        Map<String, Object> tool = new LinkedHashMap<>();
        tool.put("name", "f");
        tool.put("parameters", Map.of());
        tool.put("return", "x");
        // jinja2 3.1.6 renders the same
        assertThat(render(
                        "{%- for key, val in tool.items() if key != \"return\" %}{{ key }}{% if not loop.last %},"
                                + "{% else %}.{% endif %}{%- endfor %}|"
                                + "{% for x in xs if x > 1 -%} {{ loop.index0 }}:{{ x }};{% endfor %}",
                        Map.of("tool", tool, "xs", List.of(1, 2))))
                .isEqualTo("name,parameters.|0:2;");
    }

    @Test
    void notBindsLooserThanComparisons() {
        // Jinja: not (x|length == 1); Jinjava prints booleans in lower case (as the test above)
        assertThat(render(
                        "{{ not xs|length == 1 }}|{{ not xs|length != 1 }}|{{ not n == 'a' }}",
                        Map.of("xs", List.of(1, 2), "n", "a")))
                .isEqualToIgnoringCase("True|False|False");
    }

    @Test
    void stringsAreIterableAndItemsListsPairs() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("a", 1);
        d.put("b", "x");
        assertThat(render(
                        "{{ s is iterable }}|{{ d is iterable }}|{{ n is iterable }}|"
                                + "{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}|{{ missing | items | list }}",
                        Map.of("s", "text", "d", d, "n", 3)))
                .isEqualToIgnoringCase("True|True|False|a=1;b=x;|[]");
    }

    @Test
    void outputIsNotInterpretedAgain() {
        assertThat(render("{{- '<tool_call>\\n{{\"name\": <function-name>}}\\n</tool_call>' }}", Map.of()))
                .isEqualTo("<tool_call>\n{{\"name\": <function-name>}}\n</tool_call>");
    }

    @Test
    void toolsAndDocumentsReachTheTemplate() {
        String t = "{{ tools is none }}|{{ documents is none }}|{% for d in documents %}{{ d.title }}:{{ d.text }};"
                + "{% endfor %}{% for t in tools %}{{ t.function.name }}{% endfor %}";
        ChatTemplate c = ChatTemplate.compile(t);
        assertThat(c.render(List.of(), false, null)).isEqualToIgnoringCase("True|True|");
        assertThat(c.render(
                        List.of(),
                        List.of(Map.of("type", "function", "function", Map.of("name", "f"))),
                        List.of(Map.of("title", "T", "text", "body")),
                        false,
                        null))
                .isEqualToIgnoringCase("False|False|T:body;f");
    }
}
