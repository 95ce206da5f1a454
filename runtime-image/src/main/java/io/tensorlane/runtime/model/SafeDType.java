package io.tensorlane.runtime.model;

/** The element types of the safetensors format, with their sizes in bytes. */
public enum SafeDType {
  BOOL(1),
  U8(1),
  I8(1),
  F8_E4M3(1),
  F8_E5M2(1),
  F8_E8M0(1),
  I16(2),
  U16(2),
  F16(2),
  BF16(2),
  I32(4),
  U32(4),
  F32(4),
  I64(8),
  U64(8),
  F64(8),
  C64(8);

  private final int bytes;

  SafeDType(int bytes) {
    this.bytes = bytes;
  }

  public int bytes() {
    return bytes;
  }

  /** The dtype of a header's {@code "dtype"} string (exact spelling), or a ModelException naming it. */
  public static SafeDType parse(String name) {
    for (SafeDType d : values()) {
      if (d.name().equals(name)) {
        return d;
      }
    }
    throw new ModelException("unknown safetensors dtype " + name);
  }
}
