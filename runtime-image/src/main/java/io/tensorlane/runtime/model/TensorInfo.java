package io.tensorlane.runtime.model;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;

/**
 * One tensor of a safetensors file: where its bytes are, not the bytes.
 *
 * @param offset absolute byte offset of the tensor's first byte in {@code file}
 * @param byteLength product(shape) x dtype size
 */
public record TensorInfo(String name, SafeDType dtype, long[] shape, Path file, long offset, long byteLength) {
    public TensorInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(dtype, "dtype");
        shape = shape.clone();
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    public int rank() {
        return shape.length;
    }

    public long elements() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /** 1-D [n]: n; 2-D [r, c]: r. */
    public long rows() {
        matrix();
        return shape[0];
    }

    /** 1-D [n]: 1; 2-D [r, c]: c. */
    public long cols() {
        matrix();
        return shape.length == 1 ? 1 : shape[1];
    }

    private void matrix() {
        if (shape.length != 1 && shape.length != 2) {
            throw new ModelException("tensor " + name + " in " + file + " has shape " + Arrays.toString(shape)
                    + "; expected a 1-D or 2-D tensor");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TensorInfo t
                && name.equals(t.name)
                && dtype == t.dtype
                && Arrays.equals(shape, t.shape)
                && Objects.equals(file, t.file)
                && offset == t.offset
                && byteLength == t.byteLength;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, dtype, Arrays.hashCode(shape), file, offset, byteLength);
    }

    @Override
    public String toString() {
        return name + " " + dtype + Arrays.toString(shape) + " @" + file + ":" + offset + "+" + byteLength;
    }
}
