package io.tensorlane.runtime.model;

import io.tensorlane.modelfacts.ModelFactsException;
import io.tensorlane.modelfacts.SafetensorsHeader;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The header of one safetensors file: an 8-byte little-endian header length N, N bytes of JSON
 * ({@code name -> {dtype, shape, data_offsets: [begin, end]}}, plus an ignored {@code __metadata__}), then the data;
 * offsets are relative to the first byte after the header. Only the header is read, by the one header parser
 * ({@link SafetensorsHeader}, crd module); this class adds the engine's checks (known dtypes, no overlapping tensors,
 * a file exactly as long as its header declares) and where each tensor's bytes are for memory-mapping.
 */
public final class SafetensorsFile {

    private final Path file;
    private final long fileSize;
    private final long dataStart;
    private final Map<String, TensorInfo> tensors;

    private SafetensorsFile(Path file, long fileSize, long dataStart, Map<String, TensorInfo> tensors) {
        this.file = file;
        this.fileSize = fileSize;
        this.dataStart = dataStart;
        this.tensors = Collections.unmodifiableMap(tensors);
    }

    public static SafetensorsFile read(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            return parse(file, size, header(file, ch));
        } catch (NoSuchFileException e) {
            throw new ModelException(file + " does not exist", e);
        } catch (IOException e) {
            throw new ModelException("cannot read " + file + ": " + e, e);
        }
    }

    /**
     * The size the file's header declares: 8 + header length + the largest {@code data_offsets} end. Reads only the
     * header and checks only what that needs (a download is verified with it before the tensors are looked at).
     */
    public static long declaredSize(Path file) {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            byte[] header = header(file, ch);
            return facts(() -> SafetensorsHeader.declaredSize(header, file.toString()));
        } catch (NoSuchFileException e) {
            throw new ModelException(file + " does not exist", e);
        } catch (IOException e) {
            throw new ModelException("cannot read " + file + ": " + e, e);
        }
    }

    private static byte[] header(Path file, FileChannel ch) throws IOException {
        try {
            return SafetensorsHeader.read(ch, file.toString());
        } catch (ModelFactsException e) {
            throw new ModelException(e.getMessage(), e);
        }
    }

    /** The shared header parser's result; its errors (naming the file) as the engine's {@link ModelException}. */
    private static <T> T facts(Supplier<T> read) {
        try {
            return read.get();
        } catch (ModelFactsException e) {
            throw new ModelException(e.getMessage(), e);
        }
    }

    private static SafetensorsFile parse(Path file, long size, byte[] headerJson) {
        long dataStart = 8L + headerJson.length;
        List<SafetensorsHeader.Entry> entries =
                facts(() -> SafetensorsHeader.entries(headerJson, size - dataStart, file.toString()));
        Map<String, TensorInfo> tensors = new LinkedHashMap<>();
        for (SafetensorsHeader.Entry e : entries) {
            SafeDType dtype;
            try {
                dtype = SafeDType.parse(e.dtype());
            } catch (ModelException ex) {
                throw new ModelException(file + ": tensor " + e.name() + ": " + ex.getMessage(), ex);
            }
            tensors.put(e.name(), new TensorInfo(e.name(), dtype, e.shape(), file, dataStart + e.begin(), e.bytes()));
        }
        List<TensorInfo> byOffset = new ArrayList<>(tensors.values());
        byOffset.sort(Comparator.comparingLong(TensorInfo::offset).thenComparingLong(TensorInfo::byteLength));
        TensorInfo prev = null;
        for (TensorInfo t : byOffset) {
            if (prev != null && t.offset() < prev.offset() + prev.byteLength() && t.byteLength() > 0) {
                throw new ModelException(
                        file + ": tensors " + prev.name() + " and " + t.name() + " overlap (data_offsets ["
                                + (prev.offset() - dataStart) + ", " + (prev.offset() - dataStart + prev.byteLength())
                                + ") and ["
                                + (t.offset() - dataStart) + ", " + (t.offset() - dataStart + t.byteLength()) + "))");
            }
            if (t.byteLength() > 0) {
                prev = t;
            }
        }
        long declared = facts(() -> SafetensorsHeader.declaredSize(headerJson, file.toString()));
        if (declared != size) {
            throw new ModelException(sizeMismatch(file, size, declared));
        }
        return new SafetensorsFile(file, size, dataStart, tensors);
    }

    /** The message for a file whose size is not what its header declares (truncated, or trailing bytes). */
    public static String sizeMismatch(Path file, long size, long declared) {
        return file + ": " + size + " bytes on disk but its header declares " + declared + " (8 + header + data); "
                + (size < declared
                        ? "the file is incomplete (an interrupted download?)"
                        : "the file has " + (size - declared) + " trailing bytes (a corrupted download?)");
    }

    public Path file() {
        return file;
    }

    public long fileSize() {
        return fileSize;
    }

    /** Absolute offset of the data section (8 + header length). */
    public long dataStart() {
        return dataStart;
    }

    /** Tensors by name, in header order. */
    public Map<String, TensorInfo> tensors() {
        return tensors;
    }
}
