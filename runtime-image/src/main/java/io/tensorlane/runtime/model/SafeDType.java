package io.tensorlane.runtime.model;

import io.tensorlane.modelfacts.SafetensorsHeader;

/** The element types of the safetensors format the engine knows (each with a size in the header parser's table). */
public enum SafeDType {
    BOOL,
    U8,
    I8,
    F8_E4M3,
    F8_E5M2,
    F8_E8M0,
    I16,
    U16,
    F16,
    BF16,
    I32,
    U32,
    F32,
    I64,
    U64,
    F64,
    C64;

    /** Bytes per element: the size table of the one header parser ({@link SafetensorsHeader#elementBytes}). */
    private final int bytes = SafetensorsHeader.elementBytes(name());

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
