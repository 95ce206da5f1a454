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
}
