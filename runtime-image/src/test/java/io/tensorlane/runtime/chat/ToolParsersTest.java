package io.tensorlane.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The tool-call parser chosen from a model's config.json and chat template (the committed fixtures), or named. */
class ToolParsersTest {
    private static final Path MODELS = Path.of("src/test/resources/model");
    private static final Path TEMPLATES = Path.of("src/test/resources/chat/templates");

    @ParameterizedTest(name = "{0} + {1} -> {2}")
    @CsvSource({
        "qwen2.5-7b-instruct.json, qwen2.5-instruct.jinja, hermes",
        "qwen3-8b-v5.json, qwen3.jinja, hermes",
        "qwen3-0.6b.json, '', hermes",
        "llama-3.1-8b-instruct.json, llama-3.1-instruct.jinja, llama3_json",
        "llama-3.2-1b.json, llama-3.2-instruct.jinja, llama3_json",
        "mistral-7b-instruct-v0.3.json, mistral-7b-instruct-v0.3.jinja, mistral",
        "mistral-7b-v0.1.json, '', ",
        "llama-3.2-1b.json, '', ",
    })
    void chosenFromTheModel(String config, String template, String parser, @TempDir Path dir) throws Exception {
        Files.copy(MODELS.resolve(config), dir.resolve("config.json"));
        List<String> texts = template.isEmpty() ? List.of() : List.of(Files.readString(TEMPLATES.resolve(template)));
        assertThat(ToolParsers.choose(null, dir, texts)).isEqualTo(parser);
        assertThat(ToolParsers.choose("auto", dir, texts)).isEqualTo(parser);
    }

    @Test
    void theTemplateDecidesWithoutAConfig() {
        assertThat(ToolParsers.forModel("", "... <tool_call> ...")).isEqualTo("hermes");
        assertThat(ToolParsers.forModel("", "[AVAILABLE_TOOLS]")).isEqualTo("mistral");
        assertThat(ToolParsers.forModel("", "<|python_tag|>")).isEqualTo("llama3_json");
        assertThat(ToolParsers.forModel("", "{{ messages }}")).isNull();
    }

    @Test
    void theFlagWinsAndIsChecked(@TempDir Path dir) {
        assertThat(ToolParsers.choose("mistral", dir, List.of("<tool_call>"))).isEqualTo("mistral");
        assertThatThrownBy(() -> ToolParsers.choose("pythonic", dir, List.of()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown tool-call parser 'pythonic'");
    }
}
