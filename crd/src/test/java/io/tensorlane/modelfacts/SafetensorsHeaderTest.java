package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SafetensorsHeaderTest {
    static byte[] le(long n) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(n).array();
    }

    @Test
    void bytesPerDtypeFromOffsets() {
        String h = """
        {"__metadata__": {"format": "pt"},
         "embed": {"dtype": "BF16", "shape": [10, 4], "data_offsets": [0, 80]},
         "norm": {"dtype": "F32", "shape": [4], "data_offsets": [80, 96]},
         "w": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [96, 128]},
         "q": {"dtype": "F8_E4M3", "shape": [8], "data_offsets": [128, 136]},
         "packed": {"dtype": "F4", "shape": [8], "data_offsets": [136, 140]}}""";
        Map<String, Long> m = SafetensorsHeader.bytesByDtype(h.getBytes(StandardCharsets.UTF_8), "model.safetensors");
        assertThat(m)
                .containsExactlyEntriesOf(
                        new java.util.TreeMap<>(Map.of("BF16", 112L, "F32", 16L, "F8_E4M3", 8L, "F4", 4L)));
        ModelFacts f = ModelFacts.of(
                new ConfigFacts("LlamaForCausalLM", null, 1, "bfloat16"),
                List.of(
                        TensorTally.of(SafetensorsHeader.entries(h.getBytes(StandardCharsets.UTF_8), -1, "a")),
                        new TensorTally(Map.of("BF16", 8L), 4, 0, 0)),
                "src");
        assertThat(f.weightBytes()).isEqualTo(148);
        assertThat(f.counts().parameters())
                .as("40 + 4 + 16 + 8 + 8 elements, and 4")
                .isEqualTo(80);
        assertThat(f.files()).isEqualTo(2);
        assertThat(f.bytesByDtype()).containsEntry("BF16", 120L);
    }

    @Test
    void headerLengthIsLittleEndianAndChecked() {
        assertThat(SafetensorsHeader.headerLength(le(1234), 10_000, "a")).isEqualTo(1234);
        assertThat(SafetensorsHeader.headerLength(le(1234), -1, "a")).isEqualTo(1234);
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(le(1234), 100, "a.safetensors"))
                .hasMessageContaining("a.safetensors: header length 1234 is not plausible (expected 2..92)");
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(le(-1), -1, "b"))
                .hasMessageContaining("18446744073709551615");
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(new byte[3], -1, "c"))
                .hasMessageContaining("fewer than 8");
    }

    @Test
    void entriesInHeaderOrderCheckedAgainstTheDataSectionWhenItsSizeIsKnown() {
        byte[] h = """
        {"b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]},
         "__metadata__": {"format": "pt"},
         "a": {"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 8]}}""".getBytes(StandardCharsets.UTF_8);
        List<SafetensorsHeader.Entry> es = SafetensorsHeader.entries(h, 16, "m");
        assertThat(es).extracting(SafetensorsHeader.Entry::name).containsExactly("b", "a");
        assertThat(es.get(1).shape()).containsExactly(2, 2);
        assertThat(es.get(1).bytes()).isEqualTo(8);
        assertThat(SafetensorsHeader.declaredSize(h, "m")).isEqualTo(8 + h.length + 16);
        assertThatThrownBy(() -> SafetensorsHeader.entries(h, 12, "m"))
                .isInstanceOf(ModelFactsException.class)
                .hasMessage("m: tensor b: data_offsets [8, 16] are outside the data section of 12 bytes");
        assertThatThrownBy(() -> SafetensorsHeader.headerLength(le(2), 5, "s"))
                .isInstanceOf(ModelFactsException.class)
                .hasMessage("s: 5 bytes is too short for a safetensors file (8-byte header length)");
    }

    static Stream<Arguments> broken() {
        return Stream.of(
                Arguments.of(
                        "{\"w\": {\"dtype\": \"BF16\", \"shape\": [4], \"data_offsets\": [0, 6]}}",
                        "tensor w: data_offsets [0, 6] hold 6 bytes but shape [4] x BF16 needs 8"),
                Arguments.of("{\"w\": {\"shape\": [4], \"data_offsets\": [0, 8]}}", "tensor w: missing dtype"),
                Arguments.of(
                        "{\"w\": {\"dtype\": \"BF16\", \"shape\": [4], \"data_offsets\": [8, 0]}}",
                        "data_offsets must be"),
                Arguments.of("{\"w\": {\"dtype\": \"BF16\", \"data_offsets\": [0, 8]}}", "missing shape"),
                Arguments.of("{\"w\": ", "header is not valid JSON"),
                Arguments.of("[]", "header must be a JSON object"));
    }

    @ParameterizedTest
    @MethodSource("broken")
    void brokenHeadersSayWhich(String header, String message) {
        assertThatThrownBy(() ->
                        SafetensorsHeader.bytesByDtype(header.getBytes(StandardCharsets.UTF_8), "m-1.safetensors"))
                .isInstanceOf(ModelFactsException.class)
                .hasMessageStartingWith("m-1.safetensors")
                .hasMessageContaining(message);
    }

    @Test
    void aCheckpointWithoutSafetensorsIsAnError() {
        assertThatThrownBy(() ->
                        ModelFacts.of(new ConfigFacts("LlamaForCausalLM", null, 1, "bfloat16"), List.of(), "hf://a/b"))
                .hasMessageContaining("hf://a/b: no *.safetensors files");
    }
}
