package io.tensorlane.runtime.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Sources, globs and origins: the pure parts of fetch-model. */
class HubSourceTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "hf://meta-llama/Llama-3.1-8B-Instruct, meta-llama/Llama-3.1-8B-Instruct, main, false",
        "hf://Qwen/Qwen2.5-0.5B@v1.0, Qwen/Qwen2.5-0.5B, v1.0, false",
        "hf://org/name@refs/pr/12, org/name, refs/pr/12, false",
        "hf://a_b/c.d@0123456789abcdef0123456789abcdef01234567, a_b/c.d, 0123456789abcdef0123456789abcdef01234567, true",
        "hf://gpt2, gpt2, main, false"
    }) // ids without an org exist on the Hub, and spec.model.source accepts them
    void parsesGoodSources(String uri, String id, String revision, boolean pinned) throws FetchFailure {
        HubSource s = HubSource.parse(uri);
        assertThat(s.id()).isEqualTo(id);
        assertThat(s.revision()).isEqualTo(revision);
        assertThat(s.pinned()).isEqualTo(pinned);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "meta-llama/Llama-3.1-8B | expected hf://ORG/NAME[@REVISION]",
                "pvc://claim/path | expected hf://ORG/NAME[@REVISION]",
                "hf:// | '' is not a valid organization or model name",
                "hf://a/b/c | expected [ORG/]NAME",
                "hf://a/ | '' is not a valid organization or model name",
                "hf://-a/b | '-a' is not a valid",
                "hf://a/b..c | 'b..c' is not a valid",
                "hf://a/b@main@x | the revision 'main@x' is not",
                "hf://a/b@../x | the revision '../x' is not",
                "hf://a/b@refs//x | the revision 'refs//x' is not"
            })
    void rejectsBadSources(String uri, String fragment) {
        assertThatThrownBy(() -> HubSource.parse(uri))
                .isInstanceOf(FetchFailure.class)
                .hasMessageStartingWith("bad model source '" + uri + "'")
                .hasMessageContaining(fragment)
                .extracting(e -> ((FetchFailure) e).kind())
                .isEqualTo(FetchFailure.Kind.USAGE);
    }

    @Test
    void rejectsOverlongIds() {
        assertThatThrownBy(() -> HubSource.parse("hf://org/" + "x".repeat(100))).hasMessageContaining("longer than 96");
    }

    @ParameterizedTest(name = "{0} ~ {1}: {2}")
    @CsvSource({
        "config.json, config.json, true",
        "model-00001-of-00004.safetensors, *.safetensors, true",
        "original/consolidated.safetensors, *.safetensors, false",
        "original/consolidated.safetensors, **.safetensors, true",
        "original/consolidated.safetensors, original/*, true",
        "tokenizer.model, tokenizer.model, true",
        "pytorch_model.bin, *.safetensors, false",
        "model-1.bin, model-?.bin, true"
    })
    void globs(String file, String glob, boolean match) throws FetchFailure {
        assertThat(FileSelection.of(List.of(glob)).matches(file)).isEqualTo(match);
    }

    @Test
    void theDefaultSelectionIsWhatAnEngineNeeds() {
        List<String> repo = List.of(
                ".gitattributes",
                "README.md",
                "LICENSE",
                "config.json",
                "generation_config.json",
                "model-00001-of-00002.safetensors",
                "model-00002-of-00002.safetensors",
                "model.safetensors.index.json",
                "original/consolidated.00.pth",
                "original/params.json",
                "special_tokens_map.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "tokenizer.model",
                "chat_template.jinja",
                "additional_chat_templates/tool_use.jinja",
                "additional_chat_templates/rag.jinja",
                "additional_chat_templates/nested/other.jinja",
                "additional_chat_templates/notes.txt",
                "chat_template.json",
                "pytorch_model.bin",
                "onnx/model.onnx");
        assertThat(FileSelection.defaults().select(repo))
                .containsExactly(
                        "config.json",
                        "generation_config.json",
                        "model-00001-of-00002.safetensors",
                        "model-00002-of-00002.safetensors",
                        "model.safetensors.index.json",
                        "special_tokens_map.json",
                        "tokenizer.json",
                        "tokenizer_config.json",
                        "tokenizer.model",
                        "chat_template.jinja",
                        "additional_chat_templates/tool_use.jinja",
                        "additional_chat_templates/rag.jinja");
    }
}
