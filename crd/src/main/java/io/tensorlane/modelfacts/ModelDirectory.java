package io.tensorlane.modelfacts;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * The facts of a model directory on a local file system (a mounted PVC, a host path): config.json and the header of
 * every {@code *.safetensors} file, nothing else read. The digest is a sha256 over config.json and the headers, so
 * the same checkpoint always gives the same digest (the revision of a source without commits).
 */
public final class ModelDirectory {
    private ModelDirectory() {}

    /** Facts and digest of a directory. */
    public record Read(ModelFacts facts, String digest) {}

    /**
     * @throws ModelFactsException naming the file and what is wrong (missing config.json, no safetensors, bad header)
     */
    public static Read read(Path dir) {
        MessageDigest sha = sha256();
        Path config = dir.resolve("config.json");
        byte[] cfg;
        try {
            cfg = Files.readAllBytes(config);
        } catch (NoSuchFileException e) {
            throw new ModelFactsException(config + " does not exist (expected a Hugging Face model directory)", e);
        } catch (IOException e) {
            throw new ModelFactsException("cannot read " + config + ": " + e.getMessage(), e);
        }
        sha.update(cfg);
        ConfigFacts facts = ConfigFacts.parse(new String(cfg, StandardCharsets.UTF_8), config.toString());
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".safetensors"))
                    .sorted()
                    .toList();
        } catch (IOException e) {
            throw new ModelFactsException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        List<TensorTally> perFile = new ArrayList<>();
        for (Path f : files) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                byte[] header = SafetensorsHeader.read(ch, f.toString());
                sha.update(f.getFileName().toString().getBytes(StandardCharsets.UTF_8));
                sha.update(header);
                perFile.add(TensorTally.of(SafetensorsHeader.entries(header, -1, f.toString())));
            } catch (IOException e) {
                throw new ModelFactsException("cannot read " + f + ": " + e.getMessage(), e);
            }
        }
        return new Read(
                ModelFacts.of(facts, perFile, dir.toString()),
                "sha256:" + HexFormat.of().formatHex(sha.digest()));
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java runtime", e);
        }
    }
}
