package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.modelfacts.ModelSource.Scheme;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The schema pattern (what kubectl apply accepts) and the parser agree, per scheme, on good and bad URIs. */
class ModelSourceTest {
    static Stream<Arguments> good() {
        return Stream.of(
                Arguments.of(
                        "hf://meta-llama/Llama-3.1-8B-Instruct",
                        Scheme.HF,
                        "meta-llama/Llama-3.1-8B-Instruct",
                        "",
                        "main"),
                Arguments.of(
                        "hf://Qwen/Qwen3-0.6B@c1899de289a04d12100db370d81485cdf75e47ca",
                        Scheme.HF,
                        "Qwen/Qwen3-0.6B",
                        "",
                        "c1899de289a04d12100db370d81485cdf75e47ca"),
                Arguments.of("hf://gpt2@v1.0", Scheme.HF, "gpt2", "", "v1.0"),
                Arguments.of("hf://org/name@refs/pr/1", Scheme.HF, "org/name", "", "refs/pr/1"),
                Arguments.of("pvc://models/llama/8b", Scheme.PVC, "models", "llama/8b", null),
                Arguments.of("pvc://model-cache", Scheme.PVC, "model-cache", "", null),
                Arguments.of("pvc://model-cache/llama/", Scheme.PVC, "model-cache", "llama", null),
                Arguments.of("file:///var/lib/models/llama-8b", Scheme.FILE, "/var/lib/models/llama-8b", "", null),
                Arguments.of(
                        "oci://registry.local:5000/models/llama-8b:v1",
                        Scheme.OCI,
                        "registry.local:5000/models/llama-8b:v1",
                        "",
                        null),
                Arguments.of(
                        "oci://registry.local/models/llama@sha256:" + "a".repeat(64),
                        Scheme.OCI,
                        "registry.local/models/llama@sha256:" + "a".repeat(64),
                        "",
                        null));
    }

    @ParameterizedTest
    @MethodSource("good")
    void goodSourcesMatchTheSchemaAndParse(String uri, Scheme scheme, String location, String path, String revision) {
        assertThat(Pattern.compile(ModelSource.PATTERN).matcher(uri).matches())
                .as(uri)
                .isTrue();
        ModelSource s = ModelSource.parse(uri);
        assertThat(s).isEqualTo(new ModelSource(scheme, location, path, revision));
        assertThat(ModelSource.parse(s.uri())).isEqualTo(s);
    }

    static Stream<Arguments> bad() {
        return Stream.of(
                Arguments.of("s3://bucket/llama", "unknown scheme"),
                Arguments.of("https://example.invalid/llama", "unknown scheme"),
                Arguments.of("meta-llama/Llama-3.1-8B", "unknown scheme"),
                Arguments.of("hf://", "not a valid hf:// URI"),
                Arguments.of("hf://org/name/extra", "not a valid hf:// URI"),
                Arguments.of("hf://org/name@", "not a valid hf:// URI"),
                Arguments.of("pvc://Models/llama", "not a valid pvc:// URI"),
                Arguments.of("pvc:///llama", "not a valid pvc:// URI"),
                Arguments.of("file://relative/path", "not a valid file:// URI"),
                Arguments.of("file:///with space", "not a valid file:// URI"),
                Arguments.of("oci://registry.local/models/llama", "not a valid oci:// URI"),
                Arguments.of("oci://registry.local:tag", "not a valid oci:// URI"));
    }

    @ParameterizedTest
    @MethodSource("bad")
    void badSourcesAreRejectedByTheSchemaAndTheParserSaysWhy(String uri, String why) {
        assertThat(Pattern.compile(ModelSource.PATTERN).matcher(uri).matches())
                .as(uri)
                .isFalse();
        assertThatThrownBy(() -> ModelSource.parse(uri))
                .isInstanceOf(ModelFactsException.class)
                .hasMessageContaining(uri)
                .hasMessageContaining(why);
    }

    @ParameterizedTest
    @ValueSource(strings = {"pvc://models/../etc", "file:///var/../etc"})
    void dotDotIsRejectedByTheParser(String uri) {
        assertThatThrownBy(() -> ModelSource.parse(uri)).hasMessageContaining("'..'");
    }

    @ParameterizedTest
    @ValueSource(strings = {"meta-llama/Llama-3.1-8B-Instruct", "gpt2"})
    void noSourceMeansTheHubRepositoryOfTheName(String name) {
        assertThat(ModelSource.of(null, name)).isEqualTo(new ModelSource(Scheme.HF, name, "", "main"));
        assertThat(ModelSource.of(" ", name).uri()).isEqualTo("hf://" + name + "@main");
    }
}
