package io.tensorlane.runtime.fetch;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.tensorlane.runtime.model.ModelException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What {@code fetch-model} leaves in the model directory: {@value #NAME} once every file is complete and verified,
 * {@value #IN_PROGRESS} while a download is under way (files that are complete so far; {@code completedAt} null).
 *
 * @param source      the source as given, e.g. hf://org/name@main
 * @param id          org/name
 * @param revision    the commit the source resolved to
 * @param files       the files and their sizes
 * @param completedAt when the download was verified (ISO-8601), null while in progress
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ModelMarker(String source, String id, String revision, List<FileEntry> files, String completedAt) {
    public static final String NAME = ".tensorlane-model.json";
    public static final String IN_PROGRESS = NAME + ".part";
    /** Suffix of a file being downloaded. */
    public static final String PART = ".part";

    private static final ObjectMapper JSON = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    public record FileEntry(String name, long size) {}

    public ModelMarker {
        files = files == null ? List.of() : List.copyOf(files);
    }

    /** The marker in {@code file}, or empty when there is none or it cannot be read (then it is not trusted). */
    public static Optional<ModelMarker> read(Path file) {
        if (!Files.isRegularFile(file)) {
            return Optional.empty();
        }
        try {
            ModelMarker m = JSON.readValue(file.toFile(), ModelMarker.class);
            return m.id() == null || m.revision() == null ? Optional.empty() : Optional.of(m);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Writes the marker to {@code file} atomically (a temporary file renamed over it). */
    public void write(Path file) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        JSON.writeValue(tmp.toFile(), this);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    public ModelMarker with(FileEntry f) {
        List<FileEntry> all = new ArrayList<>(files);
        all.removeIf(e -> e.name().equals(f.name()));
        all.add(f);
        return new ModelMarker(source, id, revision, all, completedAt);
    }

    public Optional<FileEntry> file(String name) {
        return files.stream().filter(f -> f.name().equals(name)).findFirst();
    }

    /** Same model and commit, and every listed file is in {@code dir} with its size. */
    public boolean matches(String modelId, String commit, Path dir) {
        return id.equals(modelId) && revision.equals(commit) && mismatch(dir).isEmpty();
    }

    /** The first listed file that is missing or has another size, as a sentence; empty when all match. */
    public Optional<String> mismatch(Path dir) {
        for (FileEntry f : files) {
            Path p = dir.resolve(f.name());
            try {
                if (!Files.isRegularFile(p)) {
                    return Optional.of(f.name() + " is missing");
                }
                long size = Files.size(p);
                if (size != f.size()) {
                    return Optional.of(f.name() + " is " + size + " bytes, the download recorded " + f.size());
                }
            } catch (IOException e) {
                return Optional.of("cannot read " + f.name() + ": " + e.getMessage());
            }
        }
        return Optional.empty();
    }

    /**
     * Refuses a model directory that {@code fetch-model} has not finished: a download marker or a {@code *.part} file,
     * or a completed marker whose files are missing or have other sizes. A directory without any marker passes.
     */
    public static void checkComplete(Path dir) {
        if (Files.exists(dir.resolve(IN_PROGRESS)) || firstPart(dir).isPresent()) {
            String what = Files.exists(dir.resolve(IN_PROGRESS))
                    ? IN_PROGRESS
                    : firstPart(dir).orElseThrow();
            throw new ModelException(dir + " holds an incomplete download (" + what
                    + "): fetch-model has not finished; " + "run it again to resume");
        }
        Optional<ModelMarker> m = read(dir.resolve(NAME));
        if (m.isPresent()) {
            m.get().mismatch(dir).ifPresent(why -> {
                throw new ModelException(dir + " does not match its download record " + NAME + ": " + why);
            });
        }
    }

    private static Optional<String> firstPart(Path dir) {
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*" + PART)) {
            for (Path p : ds) {
                return Optional.of(p.getFileName().toString());
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }
}
