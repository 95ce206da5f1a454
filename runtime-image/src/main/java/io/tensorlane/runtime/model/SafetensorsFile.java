package io.tensorlane.runtime.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The header of one safetensors file: an 8-byte little-endian header length N, N bytes of JSON
 * ({@code name -> {dtype, shape, data_offsets: [begin, end]}}, plus an ignored {@code __metadata__}), then the data;
 * offsets are relative to the first byte after the header. Only the header is read.
 */
public final class SafetensorsFile {
  /** Largest header accepted (the safetensors reference implementation uses the same limit). */
  public static final long MAX_HEADER_BYTES = 100L * 1024 * 1024;
  private static final ObjectMapper MAPPER = new ObjectMapper();

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
      return parse(file, size, header(file, ch, size));
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
      byte[] header = header(file, ch, ch.size());
      return 8L + header.length + dataEnd(file, json(file, header));
    } catch (NoSuchFileException e) {
      throw new ModelException(file + " does not exist", e);
    } catch (IOException e) {
      throw new ModelException("cannot read " + file + ": " + e, e);
    }
  }

  private static byte[] header(Path file, FileChannel ch, long size) throws IOException {
    if (size < 8) {
      throw new ModelException(file + ": " + size + " bytes is too short for a safetensors file (8-byte header length)");
    }
    ByteBuffer len = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    readFully(ch, len, 0);
    long n = len.getLong(0);
    if (n < 2 || n > MAX_HEADER_BYTES || n > size - 8) {
      throw new ModelException(file + ": header length " + Long.toUnsignedString(n) + " is not plausible (expected 2.."
          + Math.min(MAX_HEADER_BYTES, size - 8) + " for a file of " + size + " bytes)");
    }
    ByteBuffer header = ByteBuffer.allocate((int) n);
    readFully(ch, header, 8);
    return header.array();
  }

  private static JsonNode json(Path file, byte[] headerJson) {
    JsonNode root;
    try {
      root = MAPPER.readTree(headerJson);
    } catch (IOException e) {
      String msg = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.toString();
      throw new ModelException(file + ": header is not valid JSON: " + msg, e);
    }
    if (root == null || !root.isObject()) {
      throw new ModelException(file + ": header must be a JSON object");
    }
    return root;
  }

  /** The largest data_offsets end in the header (entries without a well-formed one count as 0). */
  private static long dataEnd(Path file, JsonNode root) {
    long end = 0;
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode off = e.getKey().equals("__metadata__") ? null : e.getValue().get("data_offsets");
      if (off != null && off.isArray() && off.size() == 2 && off.get(1).isIntegralNumber() && off.get(1).canConvertToLong()) {
        end = Math.max(end, off.get(1).longValue());
      }
    }
    return end;
  }

  private static void readFully(FileChannel ch, ByteBuffer buf, long pos) throws IOException {
    while (buf.hasRemaining()) {
      if (ch.read(buf, pos + buf.position()) < 0) {
        throw new EOFException("unexpected end of file");
      }
    }
  }

  private static SafetensorsFile parse(Path file, long size, byte[] headerJson) {
    long dataStart = 8L + headerJson.length;
    long dataSize = size - dataStart;
    JsonNode root = json(file, headerJson);
    Map<String, TensorInfo> tensors = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      if (e.getKey().equals("__metadata__")) {
        continue;
      }
      tensors.put(e.getKey(), entry(file, e.getKey(), e.getValue(), dataStart, dataSize));
    }
    List<TensorInfo> byOffset = new ArrayList<>(tensors.values());
    byOffset.sort(Comparator.comparingLong(TensorInfo::offset).thenComparingLong(TensorInfo::byteLength));
    TensorInfo prev = null;
    for (TensorInfo t : byOffset) {
      if (prev != null && t.offset() < prev.offset() + prev.byteLength() && t.byteLength() > 0) {
        throw new ModelException(file + ": tensors " + prev.name() + " and " + t.name() + " overlap (data_offsets ["
            + (prev.offset() - dataStart) + ", " + (prev.offset() - dataStart + prev.byteLength()) + ") and ["
            + (t.offset() - dataStart) + ", " + (t.offset() - dataStart + t.byteLength()) + "))");
      }
      if (t.byteLength() > 0) {
        prev = t;
      }
    }
    long declared = dataStart + dataEnd(file, root);
    if (declared != size) {
      throw new ModelException(sizeMismatch(file, size, declared));
    }
    return new SafetensorsFile(file, size, dataStart, tensors);
  }

  private static TensorInfo entry(Path file, String name, JsonNode e, long dataStart, long dataSize) {
    String where = file + ": tensor " + name;
    if (!e.isObject()) {
      throw new ModelException(where + ": expected an object {dtype, shape, data_offsets}, got " + e);
    }
    JsonNode dt = e.get("dtype");
    if (dt == null || !dt.isTextual()) {
      throw new ModelException(where + ": missing dtype");
    }
    SafeDType dtype;
    try {
      dtype = SafeDType.parse(dt.asText());
    } catch (ModelException ex) {
      throw new ModelException(where + ": " + ex.getMessage(), ex);
    }
    JsonNode sh = e.get("shape");
    if (sh == null || !sh.isArray()) {
      throw new ModelException(where + ": missing shape (expected a list of dimensions)");
    }
    long[] shape = new long[sh.size()];
    for (int i = 0; i < shape.length; i++) {
      JsonNode d = sh.get(i);
      if (!d.isIntegralNumber() || !d.canConvertToLong() || d.longValue() < 0) {
        throw new ModelException(where + ": shape " + sh + " must be a list of non-negative integers");
      }
      shape[i] = d.longValue();
    }
    JsonNode off = e.get("data_offsets");
    if (off == null || !off.isArray() || off.size() != 2 || !off.get(0).canConvertToLong() || !off.get(1).canConvertToLong()
        || !off.get(0).isIntegralNumber() || !off.get(1).isIntegralNumber()) {
      throw new ModelException(where + ": data_offsets must be [begin, end], got " + off);
    }
    long begin = off.get(0).longValue();
    long end = off.get(1).longValue();
    if (begin < 0 || end < begin || end > dataSize) {
      throw new ModelException(where + ": data_offsets [" + begin + ", " + end + "] are outside the data section of "
          + dataSize + " bytes");
    }
    long expected;
    try {
      expected = dtype.bytes();
      for (long d : shape) {
        expected = Math.multiplyExact(expected, d);
      }
    } catch (ArithmeticException ex) {
      throw new ModelException(where + ": shape " + Arrays.toString(shape) + " is too large", ex);
    }
    if (end - begin != expected) {
      throw new ModelException(where + ": data_offsets [" + begin + ", " + end + "] hold " + (end - begin)
          + " bytes but shape " + Arrays.toString(shape) + " x " + dtype + " needs " + expected);
    }
    return new TensorInfo(name, dtype, shape, file, dataStart + begin, expected);
  }

  /** The message for a file whose size is not what its header declares (truncated, or trailing bytes). */
  public static String sizeMismatch(Path file, long size, long declared) {
    return file + ": " + size + " bytes on disk but its header declares " + declared + " (8 + header + data); "
        + (size < declared ? "the file is incomplete (an interrupted download?)" : "the file has " + (size - declared)
        + " trailing bytes (a corrupted download?)");
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
