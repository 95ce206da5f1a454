package io.tensorlane.operator.plan;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Image references and label syntax, as the kubelet and the API server read them. */
class SyntaxTest {
    @ParameterizedTest(name = "{0} → {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "tensorlane-runtime|true",
                "tensorlane/runtime:0.1.0|true",
                "lmsysorg/sglang:v0.4.6-cu124|true",
                "registry.local:5000/team/vllm-openai:v0.8.5|true",
                "localhost/runtime@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef|true",
                "vllm/vllm-openai:latest@sha256:0123456789abcdef0123456789abcdef|true",
                "'runtime:1 '|false",
                "Team/Runtime:1|false",
                "runtime:|false",
                "runtime::1|false",
                "-runtime|false",
                "runtime:tag with space|false",
                "'https://host/runtime'|false"
            })
    void imageReferences(String image, boolean valid) {
        assertThat(ImageReference.valid(image)).isEqualTo(valid);
    }

    @ParameterizedTest(name = "{0}={1} → {2}")
    @CsvSource(
            delimiter = '|',
            value = {
                "pool|big-gpus|true",
                "tensorlane.io/interconnect|PCIe|true",
                "a_b.c|x_y.z|true",
                "pool||true",
                "gpu type|a|false",
                "pool|big gpus|false",
                "/pool|a|false",
                "Tensorlane.IO/x|a|false",
                "pool|-a|false",
                "pool|aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa|false"
            })
    void labels(String key, String value, boolean valid) {
        boolean ok = LabelSyntax.keyProblem(key) == null && LabelSyntax.valueProblem(value) == null;
        assertThat(ok).isEqualTo(valid);
    }
}
