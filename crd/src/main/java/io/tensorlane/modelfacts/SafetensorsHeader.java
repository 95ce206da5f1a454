package io.tensorlane.modelfacts;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The header of a safetensors file, read without its data: 8 bytes little-endian header length N, then N bytes of JSON
 * {@code name -> {dtype, shape, data_offsets}} (plus {@code __metadata__}). Only sizes and dtypes are taken from it.
 */
public final class SafetensorsHeader {
  /** Largest header accepted (the safetensors reference implementation's limit). */
  public static final long MAX_HEADER_BYTES = 100L * 1024 * 1024;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private SafetensorsHeader() {
  }

  /**
   * The header length from the first 8 bytes of a file.
   *
   * @param fileSize the file's size when known, else -1
   */
  public static long headerLength(byte[] first8, long fileSize, String file) {
    if (first8 == null || first8.length < 8) {
      throw new ModelFactsException(file + ": fewer than 8 bytes, not a safetensors file");
    }
    long n = ByteBuffer.wrap(first8, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
    long max = fileSize >= 0 ? Math.min(MAX_HEADER_BYTES, fileSize - 8) : MAX_HEADER_BYTES;
    if (n < 2 || n > max) {
      throw new ModelFactsException(file + ": header length " + Long.toUnsignedString(n) + " is not plausible (expected 2.."
          + max + ")");
    }
    return n;
  }

  /** Tensor bytes per dtype (data_offsets end - begin, checked against shape x dtype size where the size is known). */
  public static Map<String, Long> bytesByDtype(byte[] headerJson, String file) {
    JsonNode root;
    try {
      root = MAPPER.readTree(headerJson);
    } catch (IOException e) {
      throw new ModelFactsException(file + ": header is not valid JSON: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new ModelFactsException(file + ": header must be a JSON object");
    }
    Map<String, Long> out = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext();) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getKey().equals("__metadata__")) {
        tensor(file, e.getKey(), e.getValue(), out);
      }
    }
    return out;
  }

  private static void tensor(String file, String name, JsonNode t, Map<String, Long> out) {
    String where = file + ": tensor " + name;
    JsonNode dt = t.get("dtype");
    JsonNode off = t.get("data_offsets");
    JsonNode shape = t.get("shape");
    if (dt == null || !dt.isTextual()) {
      throw new ModelFactsException(where + ": missing dtype");
    }
    if (off == null || !off.isArray() || off.size() != 2 || !off.get(0).isIntegralNumber()
        || !off.get(1).isIntegralNumber() || off.get(0).longValue() < 0 || off.get(1).longValue() < off.get(0).longValue()) {
      throw new ModelFactsException(where + ": data_offsets must be [begin, end] with 0 <= begin <= end, got " + off);
    }
    if (shape == null || !shape.isArray()) {
      throw new ModelFactsException(where + ": missing shape");
    }
    long bytes = off.get(1).longValue() - off.get(0).longValue();
    int size = elementBytes(dt.asText());
    if (size > 0) {
      long expected = size;
      for (JsonNode d : shape) {
        if (!d.isIntegralNumber() || d.longValue() < 0) {
          throw new ModelFactsException(where + ": shape " + shape + " must be non-negative integers");
        }
        expected = Math.multiplyExact(expected, d.longValue());
      }
      if (expected != bytes) {
        throw new ModelFactsException(where + ": data_offsets hold " + bytes + " bytes but shape " + shape + " x "
            + dt.asText() + " needs " + expected);
      }
    }
    out.merge(dt.asText(), bytes, Long::sum);
  }

  /** Bytes per element of a safetensors dtype; 0 when the dtype is not one whose size is fixed and known here. */
  static int elementBytes(String dtype) {
    return switch (dtype) {
      case "BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "F8_E8M0" -> 1;
      case "I16", "U16", "F16", "BF16" -> 2;
      case "I32", "U32", "F32" -> 4;
      case "I64", "U64", "F64", "C64" -> 8;
      default -> 0;
    };
  }
}
