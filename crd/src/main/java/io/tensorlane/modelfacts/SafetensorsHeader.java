package io.tensorlane.modelfacts;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The header of a safetensors file, read without its data: 8 bytes little-endian header length N, then N bytes of JSON
 * {@code name -> {dtype, shape, data_offsets: [begin, end]}} (plus an ignored {@code __metadata__}); offsets are
 * relative to the first byte after the header. The one parser of these headers: the operator's inspection (over Range
 * requests), {@code inspect-model}, {@code fetch-model}'s verification and the engine's loader all read them here.
 * Errors name the file (and the tensor) and what is wrong.
 */
public final class SafetensorsHeader {
    /** Largest header accepted (the safetensors reference implementation's limit). */
    public static final long MAX_HEADER_BYTES = 100L * 1024 * 1024;

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private SafetensorsHeader() {}

    /**
     * One tensor as its header entry describes it.
     *
     * @param dtype the safetensors dtype as written (e.g. BF16)
     * @param begin first byte, relative to the data section
     * @param end one past the last byte, relative to the data section
     */
    public record Entry(String name, String dtype, long[] shape, long begin, long end) {
        public Entry {
            shape = shape.clone();
        }

        @Override
        public long[] shape() {
            return shape.clone();
        }

        /** end - begin. */
        public long bytes() {
            return end - begin;
        }
    }

    /**
     * The header length from the first 8 bytes of a file.
     *
     * @param fileSize the file's size when known, else -1
     */
    public static long headerLength(byte[] first8, long fileSize, String file) {
        if (fileSize >= 0 && fileSize < 8) {
            throw new ModelFactsException(
                    file + ": " + fileSize + " bytes is too short for a safetensors file (8-byte header " + "length)");
        }
        if (first8 == null || first8.length < 8) {
            throw new ModelFactsException(file + ": fewer than 8 bytes, not a safetensors file");
        }
        long n = ByteBuffer.wrap(first8, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        long max = fileSize >= 0 ? Math.min(MAX_HEADER_BYTES, fileSize - 8) : MAX_HEADER_BYTES;
        if (n < 2 || n > max) {
            throw new ModelFactsException(
                    file + ": header length " + Long.toUnsignedString(n) + " is not plausible (expected 2.." + max + ")"
                            + (fileSize >= 0 ? " for a file of " + fileSize + " bytes" : ""));
        }
        return n;
    }

    /** The header JSON of an open file: its length checked against the file's size, then read (not the data). */
    public static byte[] read(FileChannel ch, String file) throws IOException {
        long size = ch.size();
        long n = headerLength(readAt(ch, 0, (int) Math.min(8, size)), size, file);
        return readAt(ch, 8, (int) n);
    }

    private static byte[] readAt(FileChannel ch, long pos, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b, pos + b.position()) < 0) {
                throw new EOFException("unexpected end of file");
            }
        }
        return b.array();
    }

    /**
     * Every tensor entry, in header order, each checked: dtype, shape of non-negative integers, {@code data_offsets}
     * {@code [begin, end]} inside the data section, and end - begin = shape x element size where the dtype's size is known
     * ({@link #elementBytes}; other dtypes are listed as they are).
     *
     * @param dataSize bytes after the header when the file's size is known, else -1
     */
    public static List<Entry> entries(byte[] headerJson, long dataSize, String file) {
        JsonNode root = json(headerJson, file);
        List<Entry> out = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!e.getKey().equals("__metadata__")) {
                out.add(entry(file, e.getKey(), e.getValue(), dataSize));
            }
        }
        return out;
    }

    /** Tensor bytes per dtype (the {@link #entries} of a header whose file size is not known). */
    public static Map<String, Long> bytesByDtype(byte[] headerJson, String file) {
        Map<String, Long> out = new TreeMap<>();
        for (Entry e : entries(headerJson, -1, file)) {
            out.merge(e.dtype(), e.bytes(), Long::sum);
        }
        return out;
    }

    /**
     * The size a file with this header declares: 8 + header length + the largest {@code data_offsets} end. Checks only
     * what that needs (a download is verified with it before the tensors are looked at): entries without a well-formed
     * end count as 0.
     */
    public static long declaredSize(byte[] headerJson, String file) {
        long end = 0;
        for (Iterator<Map.Entry<String, JsonNode>> it = json(headerJson, file).fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode off =
                    e.getKey().equals("__metadata__") ? null : e.getValue().get("data_offsets");
            if (off != null
                    && off.isArray()
                    && off.size() == 2
                    && off.get(1).isIntegralNumber()
                    && off.get(1).canConvertToLong()) {
                end = Math.max(end, off.get(1).longValue());
            }
        }
        return 8L + headerJson.length + end;
    }

    private static JsonNode json(byte[] headerJson, String file) {
        JsonNode root;
        try {
            root = MAPPER.readTree(headerJson);
        } catch (IOException e) {
            String msg = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.toString();
            throw new ModelFactsException(file + ": header is not valid JSON: " + msg, e);
        }
        if (root == null || !root.isObject()) {
            throw new ModelFactsException(file + ": header must be a JSON object");
        }
        return root;
    }

    private static Entry entry(String file, String name, JsonNode t, long dataSize) {
        String where = file + ": tensor " + name;
        if (!t.isObject()) {
            throw new ModelFactsException(where + ": expected an object {dtype, shape, data_offsets}, got " + t);
        }
        JsonNode dt = t.get("dtype");
        if (dt == null || !dt.isTextual()) {
            throw new ModelFactsException(where + ": missing dtype");
        }
        JsonNode sh = t.get("shape");
        if (sh == null || !sh.isArray()) {
            throw new ModelFactsException(where + ": missing shape (expected a list of dimensions)");
        }
        long[] shape = new long[sh.size()];
        for (int i = 0; i < shape.length; i++) {
            JsonNode d = sh.get(i);
            if (!d.isIntegralNumber() || !d.canConvertToLong() || d.longValue() < 0) {
                throw new ModelFactsException(where + ": shape " + sh + " must be a list of non-negative integers");
            }
            shape[i] = d.longValue();
        }
        JsonNode off = t.get("data_offsets");
        if (off == null
                || !off.isArray()
                || off.size() != 2
                || !off.get(0).isIntegralNumber()
                || !off.get(1).isIntegralNumber()
                || !off.get(0).canConvertToLong()
                || !off.get(1).canConvertToLong()) {
            throw new ModelFactsException(where + ": data_offsets must be [begin, end], got " + off);
        }
        long begin = off.get(0).longValue();
        long end = off.get(1).longValue();
        if (begin < 0 || end < begin || dataSize >= 0 && end > dataSize) {
            throw new ModelFactsException(where
                    + (dataSize >= 0
                            ? ": data_offsets [" + begin + ", " + end + "] are outside " + "the data section of "
                                    + dataSize + " bytes"
                            : ": data_offsets must be [begin, end] with 0 <= begin <= end, got " + off));
        }
        int size = elementBytes(dt.asText());
        if (size > 0) {
            long expected = size;
            try {
                for (long d : shape) {
                    expected = Math.multiplyExact(expected, d);
                }
            } catch (ArithmeticException ex) {
                throw new ModelFactsException(where + ": shape " + Arrays.toString(shape) + " is too large", ex);
            }
            if (expected != end - begin) {
                throw new ModelFactsException(where + ": data_offsets [" + begin + ", " + end + "] hold "
                        + (end - begin) + " bytes but shape " + Arrays.toString(shape) + " x " + dt.asText() + " needs "
                        + expected);
            }
        }
        return new Entry(name, dt.asText(), shape, begin, end);
    }

    /** Bytes per element of a safetensors dtype; 0 when the dtype is not one whose size is fixed and known here. */
    public static int elementBytes(String dtype) {
        return switch (dtype) {
            case "BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "F8_E8M0" -> 1;
            case "I16", "U16", "F16", "BF16" -> 2;
            case "I32", "U32", "F32" -> 4;
            case "I64", "U64", "F64", "C64" -> 8;
            default -> 0;
        };
    }
}
