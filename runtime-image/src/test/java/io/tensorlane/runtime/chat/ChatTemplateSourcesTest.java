package io.tensorlane.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Template resolution and selection as transformers' tokenizer does them (tokenization_utils_base.py:
 * {@code _from_pretrained} "If independent chat template file(s) exist, they take priority over template entries in
 * the tokenizer config", {@code __init__}'s list-to-dict, {@code get_chat_template}).
 */
class ChatTemplateSourcesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String NO_DEFAULT = "This model has multiple chat templates with no default specified! Please "
            + "either pass a chat template or the name of the template you wish to use to the `chat_template` "
            + "argument. Available template names are ";

    private static JsonNode json(String s) {
        try {
            return s == null ? null : JSON.readTree(s);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /**
     * case, tokenizer_config chat_template (JSON), chat_template.jinja, additional templates, then the template chosen
     * without tools and with tools (a template text, or "!" + the start of the error).
     */
    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of("nothing", null, null, Map.of(), "!this model has no chat template", "!this model"),
                Arguments.of("config string", "\"CFG\"", null, Map.of(), "CFG", "CFG"),
                Arguments.of("config null", "null", null, Map.of(), "!this model has no chat template", "!this"),
                Arguments.of("jinja file only", null, "FILE", Map.of(), "FILE", "FILE"),
                Arguments.of("jinja file beats the config string", "\"CFG\"", "FILE", Map.of(), "FILE", "FILE"),
                Arguments.of("empty jinja file is a template", "\"CFG\"", "", Map.of(), "", ""),
                Arguments.of(
                        "config list: default and tool_use",
                        "[{\"name\": \"default\", \"template\": \"D\"}, {\"name\": \"tool_use\", \"template\": \"T\"}]",
                        null,
                        Map.of(),
                        "D",
                        "T"),
                Arguments.of(
                        "config list without tool_use",
                        "[{\"name\": \"default\", \"template\": \"D\"}, {\"name\": \"rag\", \"template\": \"R\"}]",
                        null,
                        Map.of(),
                        "D",
                        "D"),
                Arguments.of(
                        "config list without default",
                        "[{\"name\": \"tool_use\", \"template\": \"T\"}, {\"name\": \"rag\", \"template\": \"R\"}]",
                        null,
                        Map.of(),
                        "!" + NO_DEFAULT + "['rag', 'tool_use'].",
                        "T"),
                Arguments.of(
                        "jinja file beats the config list",
                        "[{\"name\": \"default\", \"template\": \"D\"}, {\"name\": \"tool_use\", \"template\": \"T\"}]",
                        "FILE",
                        Map.of(),
                        "FILE",
                        "FILE"),
                Arguments.of(
                        "jinja file plus additional tool_use",
                        "\"CFG\"",
                        "FILE",
                        Map.of("tool_use", "TU"),
                        "FILE",
                        "TU"),
                Arguments.of(
                        "additional only: the config is not read, no default",
                        "\"CFG\"",
                        null,
                        Map.of("tool_use", "TU"),
                        "!" + NO_DEFAULT + "['tool_use'].",
                        "TU"),
                Arguments.of(
                        "additional default.jinja counts as default",
                        null,
                        null,
                        Map.of("default", "AD", "tool_use", "TU"),
                        "AD",
                        "TU"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void resolvesAndSelectsAsTransformers(
            String name, String config, String jinja, Map<String, String> additional, String plain, String withTools) {
        ChatTemplateSources s = ChatTemplateSources.resolve(json(config), jinja, additional);
        check(s, false, plain);
        check(s, true, withTools);
    }

    private static void check(ChatTemplateSources s, boolean tools, String expected) {
        if (expected.startsWith("!")) {
            assertThatThrownBy(() -> s.select(tools))
                    .isInstanceOf(ChatTemplateException.class)
                    .hasMessageStartingWith(expected.substring(1));
        } else {
            assertThat(s.templates().get(s.select(tools))).isEqualTo(expected);
        }
    }

    @Test
    void malformedConfigTemplatesAreRefusedByName() {
        assertThatThrownBy(() -> ChatTemplateSources.resolve(json("42"), null, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("chat_template must be a string or a list");
        assertThatThrownBy(() -> ChatTemplateSources.resolve(json("[{\"name\": \"default\"}]"), null, Map.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("chat_template[0] is not a {\"name\": string, \"template\": string} object");
    }

    @Test
    void readsTheFilesOfAModelFolder(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("tokenizer_config.json"), "{\"chat_template\": \"CFG\", \"eos_token\": \"x\"}");
        assertThat(ChatTemplateSources.read(dir).templates()).containsExactly(Map.entry("default", "CFG"));

        Files.writeString(dir.resolve("chat_template.jinja"), "FILE é\n");
        ChatTemplateSources single = ChatTemplateSources.read(dir);
        assertThat(single.named()).isFalse();
        assertThat(single.templates()).containsExactly(Map.entry("default", "FILE é\n"));

        Path more = Files.createDirectories(dir.resolve("additional_chat_templates"));
        Files.writeString(more.resolve("tool_use.jinja"), "TU");
        Files.writeString(more.resolve("notes.txt"), "not a template");
        Files.createDirectories(more.resolve("nested"))
                .resolve("x.jinja")
                .toFile()
                .createNewFile();
        ChatTemplateSources named = ChatTemplateSources.read(dir);
        assertThat(named.named()).isTrue();
        assertThat(named.templates()).containsOnlyKeys("default", "tool_use");
        assertThat(named.select(true)).isEqualTo("tool_use");
        assertThat(named.select(false)).isEqualTo("default");
    }

    @Test
    void aFolderWithoutTemplatesHasNone(@TempDir Path dir) {
        assertThat(ChatTemplateSources.read(dir).isEmpty()).isTrue();
    }

    @Test
    void compiledSetsPickTheSameTemplate() {
        ChatTemplateSources s = ChatTemplateSources.resolve(
                null, "plain {{ messages[0].content }}", Map.of("tool_use", "tools {{ tools | length }}"));
        ChatTemplates t = ChatTemplates.compile(s, null, null);
        var msgs = java.util.List.<Map<String, Object>>of(Map.of("role", "user", "content", "hi"));
        assertThat(t.forRequest(false).render(msgs, false, null)).isEqualTo("plain hi");
        assertThat(t.forRequest(true).render(msgs, java.util.List.of(Map.of("type", "function")), null, false, null))
                .isEqualTo("tools 1");
    }
}
