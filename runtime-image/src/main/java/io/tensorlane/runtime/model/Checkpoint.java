package io.tensorlane.runtime.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The safetensors files of a model directory: {@code model.safetensors.index.json} (its weight_map) when present, else
 * every {@code *.safetensors} file. Tensor bytes are only reached through {@link #map}, which memory-maps them;
 * nothing of the model is copied to the Java heap. Thread-safe.
 */
public final class Checkpoint implements AutoCloseable {
    public static final String INDEX_FILE = "model.safetensors.index.json";
    /** Longest range one {@link #map} call returns. */
    public static final long MAX_MAP_BYTES = Integer.MAX_VALUE - 8;

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private final Path dir;
    private final List<SafetensorsFile> files;
    private final Map<String, TensorInfo> tensors;
    private final Map<Path, FileChannel> channels = new HashMap<>();
    private boolean closed;

    private Checkpoint(Path dir, List<SafetensorsFile> files, Map<String, TensorInfo> tensors) {
        this.dir = dir;
        this.files = List.copyOf(files);
        this.tensors = Collections.unmodifiableMap(tensors);
    }

    public static Checkpoint open(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new ModelException(dir + " is not a directory (expected a Hugging Face model directory)");
        }
        Path index = dir.resolve(INDEX_FILE);
        return Files.exists(index) ? fromIndex(dir, index) : fromDirectory(dir);
    }

    private static Checkpoint fromDirectory(Path dir) {
        TreeSet<Path> paths = new TreeSet<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.safetensors")) {
            for (Path p : ds) {
                if (Files.isRegularFile(p)) {
                    paths.add(p);
                }
            }
        } catch (IOException e) {
            throw new ModelException("cannot list " + dir + ": " + e, e);
        }
        if (paths.isEmpty()) {
            throw new ModelException(dir + " has no " + INDEX_FILE
                    + " and no *.safetensors file (only safetensors checkpoints " + "are supported)");
        }
        List<SafetensorsFile> files = new ArrayList<>();
        Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        for (Path p : paths) {
            SafetensorsFile f = SafetensorsFile.read(p);
            files.add(f);
            addAll(tensors, f);
        }
        return new Checkpoint(dir, files, tensors);
    }

    private static Checkpoint fromIndex(Path dir, Path index) {
        JsonNode root;
        try {
            root = MAPPER.readTree(index.toFile());
        } catch (IOException e) {
            throw new ModelException(index + ": not valid JSON: " + e.getMessage(), e);
        }
        JsonNode map = root == null ? null : root.get("weight_map");
        if (map == null || !map.isObject() || map.isEmpty()) {
            throw new ModelException(index + ": expected a non-empty \"weight_map\" object (tensor name -> file name)");
        }
        Map<String, String> weightMap = new LinkedHashMap<>();
        TreeSet<String> names = new TreeSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = map.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getValue().isTextual()) {
                throw new ModelException(
                        index + ": weight_map." + e.getKey() + " must be a file name, got " + e.getValue());
            }
            weightMap.put(e.getKey(), e.getValue().asText());
            names.add(e.getValue().asText());
        }
        Map<String, SafetensorsFile> byName = new LinkedHashMap<>();
        for (String name : names) {
            Path p = dir.resolve(name).normalize();
            if (!p.startsWith(dir.normalize()) || !Files.isRegularFile(p)) {
                throw new ModelException(index + " references " + name + ", which does not exist in " + dir);
            }
            byName.put(name, SafetensorsFile.read(p));
        }
        Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        for (SafetensorsFile f : byName.values()) {
            addAll(tensors, f);
        }
        for (Map.Entry<String, String> e : weightMap.entrySet()) {
            if (!byName.get(e.getValue()).tensors().containsKey(e.getKey())) {
                throw new ModelException(
                        index + " maps tensor " + e.getKey() + " to " + e.getValue() + ", which has no such tensor");
            }
        }
        return new Checkpoint(dir, new ArrayList<>(byName.values()), tensors);
    }

    private static void addAll(Map<String, TensorInfo> tensors, SafetensorsFile f) {
        for (TensorInfo t : f.tensors().values()) {
            TensorInfo prev = tensors.putIfAbsent(t.name(), t);
            if (prev != null) {
                throw new ModelException("tensor " + t.name() + " is in both " + prev.file() + " and " + t.file());
            }
        }
    }

    public Path dir() {
        return dir;
    }

    public List<SafetensorsFile> files() {
        return files;
    }

    public Optional<TensorInfo> find(String name) {
        return Optional.ofNullable(tensors.get(name));
    }

    public TensorInfo require(String name) {
        TensorInfo t = tensors.get(name);
        if (t == null) {
            throw new ModelException("checkpoint " + dir + " has no tensor " + name);
        }
        return t;
    }

    /** All tensors, in file then header order. */
    public Collection<TensorInfo> tensors() {
        return tensors.values();
    }

    /** Sum of all tensors' byte lengths. */
    public long totalBytes() {
        long n = 0;
        for (TensorInfo t : tensors.values()) {
            n += t.byteLength();
        }
        return n;
    }

    /**
     * A read-only little-endian memory map of bytes [byteOffset, byteOffset + length) of the tensor's data. The buffer
     * stays valid after {@link #close}.
     */
    public ByteBuffer map(TensorInfo t, long byteOffset, long length) {
        if (byteOffset < 0 || length < 0 || byteOffset > t.byteLength() - length) {
            throw new ModelException("tensor " + t.name() + ": byte range [" + byteOffset + ", +" + length
                    + ") is outside its " + t.byteLength() + " bytes");
        }
        if (length > MAX_MAP_BYTES) {
            throw new ModelException(
                    "tensor " + t.name() + ": cannot map " + length + " bytes at once (at most " + MAX_MAP_BYTES + ")");
        }
        if (tensors.get(t.name()) == null || !tensors.get(t.name()).file().equals(t.file())) {
            throw new ModelException("tensor " + t.name() + " in " + t.file() + " is not part of checkpoint " + dir);
        }
        try {
            return channel(t.file())
                    .map(FileChannel.MapMode.READ_ONLY, t.offset() + byteOffset, length)
                    .order(ByteOrder.LITTLE_ENDIAN);
        } catch (IOException e) {
            throw new ModelException(
                    "cannot map " + length + " bytes of tensor " + t.name() + " from " + t.file() + ": " + e, e);
        }
    }

    /** The whole tensor (at most {@link #MAX_MAP_BYTES}). */
    public ByteBuffer map(TensorInfo t) {
        return map(t, 0, t.byteLength());
    }

    private synchronized FileChannel channel(Path file) throws IOException {
        if (closed) {
            throw new IllegalStateException("checkpoint " + dir + " is closed");
        }
        FileChannel ch = channels.get(file);
        if (ch == null) {
            ch = FileChannel.open(file, StandardOpenOption.READ);
            channels.put(file, ch);
        }
        return ch;
    }

    @Override
    public synchronized void close() {
        closed = true;
        IOException first = null;
        for (FileChannel ch : channels.values()) {
            try {
                ch.close();
            } catch (IOException e) {
                first = first == null ? e : first;
            }
        }
        channels.clear();
        if (first != null) {
            throw new ModelException("closing checkpoint " + dir + ": " + first, first);
        }
    }
}
