package io.tensorlane.operator.render;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every InferenceDeployment name (a DNS-1123 subdomain) gets children whose name is a valid Service name. */
class ChildNamesTest {
    static final String LONG_64 = "a".repeat(64);

    static Stream<Arguments> names() {
        return Stream.of(
                Arguments.of("a DNS-1035 label is kept", "llama-8b", "llama-8b"),
                Arguments.of("63 characters is kept", "a".repeat(63), "a".repeat(63)),
                Arguments.of(
                        "dots become dashes, plus a hash", "llama.3.1-8b", "llama-3-1-8b-" + hashOf("llama.3.1-8b")),
                Arguments.of("a leading digit is dropped", "8b-llama", "b-llama-" + hashOf("8b-llama")),
                Arguments.of("only digits", "70", "tl-" + hashOf("70")),
                Arguments.of("64 characters: cut to 54 plus the hash", LONG_64, "a".repeat(54) + "-" + hashOf(LONG_64)),
                Arguments.of(
                        "a long name with dots",
                        "x." + "b".repeat(250),
                        "x-" + "b".repeat(52) + "-" + hashOf("x." + "b".repeat(250))),
                Arguments.of(
                        "a cut that ends on a dash loses the dash",
                        "a".repeat(53) + "-.b" + "c".repeat(20),
                        "a".repeat(53) + "-" + hashOf("a".repeat(53) + "-.b" + "c".repeat(20))));
    }

    static String hashOf(String s) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(d).substring(0, 8);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("names")
    void derivedNameIsAValidServiceName(String why, String name, String expected) {
        String child = ChildNames.of(name);
        assertThat(child).isEqualTo(expected);
        assertThat(ChildNames.isDns1035Label(child)).as(child).isTrue();
    }

    @org.junit.jupiter.api.Test
    void differentNamesNeverShareChildren() {
        assertThat(ChildNames.of("a.b")).isNotEqualTo(ChildNames.of("a-b"));
        assertThat(ChildNames.of(LONG_64)).isNotEqualTo(ChildNames.of(LONG_64 + "a"));
    }
}
