package io.tensorlane.modelfacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelDirectoryTest {
    static void safetensors(Path file, String header, int dataBytes) throws IOException {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(8 + h.length + dataBytes).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(h.length).put(h);
        Files.write(file, b.array());
    }

    static void config(Path dir) throws IOException {
        try (InputStream in = ModelDirectoryTest.class.getResourceAsStream("/model/qwen3-0.6b.json")) {
            Files.write(dir.resolve("config.json"), in.readAllBytes());
        }
    }

    @Test
    void readsConfigAndHeadersAndDigestsThem(@TempDir Path dir) throws IOException {
        config(dir);
        safetensors(
                dir.resolve("model-00001.safetensors"),
                "{\"a\": {\"dtype\": \"BF16\", \"shape\": [4], \"data_offsets\": [0, 8]}}",
                8);
        safetensors(
                dir.resolve("model-00002.safetensors"),
                "{\"b\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]}}",
                8);
        Files.writeString(dir.resolve("tokenizer.json"), "{}");
        ModelDirectory.Read r = ModelDirectory.read(dir);
        assertThat(r.facts().config().architecture()).isEqualTo("Qwen3ForCausalLM");
        assertThat(r.facts().bytesByDtype()).containsEntry("BF16", 8L).containsEntry("F32", 8L);
        assertThat(r.facts().files()).isEqualTo(2);
        assertThat(r.digest())
                .startsWith("sha256:")
                .hasSize(7 + 64)
                .isEqualTo(ModelDirectory.read(dir).digest());
        safetensors(
                dir.resolve("model-00002.safetensors"),
                "{\"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
                4);
        assertThat(ModelDirectory.read(dir).digest())
                .as("another header, another digest")
                .isNotEqualTo(r.digest());
    }

    @Test
    void saysWhatIsMissing(@TempDir Path dir) throws IOException {
        assertThatThrownBy(() -> ModelDirectory.read(dir)).hasMessageContaining("config.json does not exist");
        config(dir);
        assertThatThrownBy(() -> ModelDirectory.read(dir)).hasMessageContaining("no *.safetensors files");
        Files.write(dir.resolve("x.safetensors"), new byte[] {100, 0, 0, 0, 0, 0, 0, 0, 1});
        assertThatThrownBy(() -> ModelDirectory.read(dir))
                .hasMessageContaining("x.safetensors: header length 100 is not plausible");
    }
}
