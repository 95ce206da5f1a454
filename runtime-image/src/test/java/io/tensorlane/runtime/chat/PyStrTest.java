package io.tensorlane.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Python str semantics; every expected value was printed by CPython 3.11. */
class PyStrTest {
    @Test
    void stripVariantsUsePythonWhitespaceAndChars() {
        assertThat(PyStr.call("  hi\u3000", "strip")).isEqualTo("hi");
        assertThat(PyStr.call("\u00a0\n x \t", "strip")).isEqualTo("x");
        assertThat(PyStr.call("xxhixx", "strip", "x")).isEqualTo("hi");
        assertThat(PyStr.call("\n\nbody\n\n", "lstrip", "\n")).isEqualTo("body\n\n");
        assertThat(PyStr.call("\n\nbody\n\n", "rstrip", "\n")).isEqualTo("\n\nbody");
        assertThat(PyStr.call("abcba", "strip", "ab")).isEqualTo("c");
        assertThat(PyStr.call("", "strip")).isEqualTo("");
        assertThat(PyStr.call("   ", "rstrip")).isEqualTo("");
        assertThat(PyStr.call("😀a😀", "strip", "😀")).isEqualTo("a");
    }

    @Test
    void splitIsLiteralKeepsEmptiesAndHonoursMaxsplit() {
        assertThat(PyStr.call("a,b,,c", "split", ",")).isEqualTo(List.of("a", "b", "", "c"));
        assertThat(PyStr.call("a.b", "split", ".")).isEqualTo(List.of("a", "b"));
        assertThat(PyStr.call("  x  y ", "split")).isEqualTo(List.of("x", "y"));
        assertThat(PyStr.call("a b  c ", "split", null, 1L)).isEqualTo(List.of("a", "b  c "));
        assertThat(PyStr.call("", "split")).isEqualTo(List.of());
        assertThat(PyStr.call("", "split", ",")).isEqualTo(List.of(""));
        assertThat(PyStr.call("<think>r</think>\n\nanswer", "split", "</think>"))
                .isEqualTo(List.of("<think>r", "\n\nanswer"));
        assertThat(PyStr.call("no tag", "split", "</think>")).isEqualTo(List.of("no tag"));
        assertThat(PyStr.call(" a b c ", "rsplit", null, 1L)).isEqualTo(List.of(" a b", "c"));
        assertThat(PyStr.call("a,b,c", "rsplit", ",", 1L)).isEqualTo(List.of("a,b", "c"));
        assertThatThrownBy(() -> PyStr.call("abc", "split", ""))
                .isInstanceOf(ChatTemplateException.class)
                .hasMessageContaining("empty separator");
    }

    @Test
    void startsAndEndsWith() {
        assertThat(PyStr.call("<tool_response>x</tool_response>", "startswith", "<tool_response>"))
                .isEqualTo(true);
        assertThat(PyStr.call("<tool_response>x</tool_response>", "endswith", "</tool_response>"))
                .isEqualTo(true);
        assertThat(PyStr.call("ab", "startswith", List.of("x", "a"))).isEqualTo(true);
        assertThat(PyStr.call("ab", "endswith", List.of("x", "y"))).isEqualTo(false);
        assertThat(PyStr.call("x", "endswith", "x", 0L, 0L)).isEqualTo(false);
        assertThat(PyStr.call("", "startswith", "", 0L)).isEqualTo(true);
        assertThat(PyStr.call("abc", "startswith", "", 5L)).isEqualTo(false);
        assertThat(PyStr.call("abc", "startswith", "c", -1L)).isEqualTo(true);
    }

    @Test
    void replaceFindCountCase() {
        assertThat(PyStr.call("aaa", "replace", "a", "b", 2L)).isEqualTo("bba");
        assertThat(PyStr.call("abc", "replace", "", "-")).isEqualTo("-a-b-c-");
        assertThat(PyStr.call("abc", "replace", "", "-", 2L)).isEqualTo("-a-bc");
        assertThat(PyStr.call("a.b.c", "replace", ".", "\\")).isEqualTo("a\\b\\c");
        assertThat(PyStr.call("hello", "find", "l")).isEqualTo(2);
        assertThat(PyStr.call("hello", "rfind", "l")).isEqualTo(3);
        assertThat(PyStr.call("hello", "find", "l", -2L)).isEqualTo(3);
        assertThat(PyStr.call("ab", "count", "")).isEqualTo(3);
        assertThat(PyStr.call("they're bill's 1st", "title")).isEqualTo("They'Re Bill'S 1St");
        assertThat(PyStr.call("straße", "upper")).isEqualTo("STRASSE");
        assertThat(PyStr.call("ÀB", "lower")).isEqualTo("àb");
        assertThat(PyStr.call("hELLO", "capitalize")).isEqualTo("Hello");
        assertThat(PyStr.call(", ", "join", List.of("a", "b"))).isEqualTo("a, b");
        assertThat(PyStr.call("x", "no_such_method")).isSameAs(PyStr.NOT_A_STR_METHOD);
    }
}
