package io.tensorlane.runtime.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tensorlane.runtime.model.ModelException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The download record and the check serve runs before it loads a model directory. */
class ModelMarkerTest {
    @TempDir
    Path dir;

    private ModelMarker marker() {
        return new ModelMarker(
                "hf://a/b",
                "a/b",
                "c0ffee",
                List.of(new ModelMarker.FileEntry("config.json", 2)),
                "2026-12-01T00:00:00Z");
    }

    @Test
    void roundTripsAndMatches() throws IOException {
        Files.writeString(dir.resolve("config.json"), "{}");
        marker().write(dir.resolve(ModelMarker.NAME));
        ModelMarker m = ModelMarker.read(dir.resolve(ModelMarker.NAME)).orElseThrow();
        assertThat(m).isEqualTo(marker());
        assertThat(m.matches("a/b", "c0ffee", dir)).isTrue();
        assertThat(m.matches("a/b", "beef", dir)).isFalse();
        assertThat(m.matches("a/c", "c0ffee", dir)).isFalse();
        Files.writeString(dir.resolve("config.json"), "{ }");
        assertThat(m.matches("a/b", "c0ffee", dir)).isFalse();
        assertThat(m.mismatch(dir)).hasValue("config.json is 3 bytes, the download recorded 2");
    }

    @Test
    void anUnreadableMarkerIsNotTrusted() throws IOException {
        Files.writeString(dir.resolve(ModelMarker.NAME), "{\"id\": ");
        assertThat(ModelMarker.read(dir.resolve(ModelMarker.NAME))).isEmpty();
    }

    @Test
    void serveCheckPassesPlainAndCompleteDirectories() throws IOException {
        assertThatCode(() -> ModelMarker.checkComplete(dir)).doesNotThrowAnyException();
        Files.writeString(dir.resolve("config.json"), "{}");
        marker().write(dir.resolve(ModelMarker.NAME));
        assertThatCode(() -> ModelMarker.checkComplete(dir)).doesNotThrowAnyException();
    }

    @Test
    void serveCheckRefusesIncompleteDownloads() throws IOException {
        Files.writeString(dir.resolve("model.safetensors.part"), "x");
        assertThatThrownBy(() -> ModelMarker.checkComplete(dir))
                .isInstanceOf(ModelException.class)
                .hasMessageContaining("holds an incomplete download (model.safetensors.part)");
        Files.delete(dir.resolve("model.safetensors.part"));
        Files.writeString(dir.resolve(ModelMarker.IN_PROGRESS), "{}");
        assertThatThrownBy(() -> ModelMarker.checkComplete(dir))
                .hasMessageContaining("(" + ModelMarker.IN_PROGRESS + ")");
        Files.delete(dir.resolve(ModelMarker.IN_PROGRESS));
        marker().write(dir.resolve(ModelMarker.NAME));
        assertThatThrownBy(() -> ModelMarker.checkComplete(dir))
                .hasMessageContaining("does not match its download record")
                .hasMessageContaining("config.json is missing");
    }
}
