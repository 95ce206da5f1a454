package io.tensorlane.runtime.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** Writes safetensors files for tests; tensors without data are left as (sparse) zeros. */
public final class SafetensorsWriter {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    public record T(String name, String dtype, long[] shape, byte[] data) {
        public static T of(String name, String dtype, long... shape) {
            return new T(name, dtype, shape, null);
        }

        long bytes() {
            long n = SafeDType.parse(dtype).bytes();
            for (long d : shape) {
                n *= d;
            }
            return n;
        }
    }

    private SafetensorsWriter() {}

    /** Tensors one after another in the order given; the header is padded with spaces to a multiple of 8. */
    public static Path write(Path file, List<T> tensors) {
        ObjectNode header = MAPPER.createObjectNode();
        header.putObject("__metadata__").put("format", "pt");
        long offset = 0;
        for (T t : tensors) {
            ObjectNode e = header.putObject(t.name());
            e.put("dtype", t.dtype());
            ArrayNode shape = e.putArray("shape");
            for (long d : t.shape()) {
                shape.add(d);
            }
            e.putArray("data_offsets").add(offset).add(offset + t.bytes());
            offset += t.bytes();
        }
        byte[] h = pad(header.toString());
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(0);
            f.write(le(h.length));
            f.write(h);
            f.setLength(8 + h.length + offset);
            long pos = 8 + h.length;
            for (T t : tensors) {
                if (t.data() != null) {
                    if (t.data().length != t.bytes()) {
                        throw new IllegalArgumentException(
                                t.name() + ": " + t.data().length + " data bytes for " + t.bytes());
                    }
                    f.seek(pos);
                    f.write(t.data());
                }
                pos += t.bytes();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** A file with the given header length field, header text and data bytes (zeros). */
    static Path writeRaw(Path file, long headerLength, String header, long dataBytes) {
        byte[] h = header.getBytes(StandardCharsets.UTF_8);
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(0);
            f.write(le(headerLength));
            f.write(h);
            f.setLength(8 + h.length + dataBytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    static byte[] pad(String header) {
        StringBuilder sb = new StringBuilder(header);
        while (sb.toString().getBytes(StandardCharsets.UTF_8).length % 8 != 0) {
            sb.append(' ');
        }
        return sb.toString().getBytes(StandardCharsets.UTF_8);
    }

    static byte[] le(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }
}
