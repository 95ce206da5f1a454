package io.tensorlane.runtime.model;

import java.util.List;

/**
 * One device buffer, row-major [rows, cols], filled from checkpoint windows, its elements stored as {@code type} says.
 * Rows that no piece covers (vocabulary padding) must be zero-filled. An FP8 tensor also has fp32 scales
 * ({@link WeightType#scaleRows} x {@link WeightType#scaleCols}), filled from {@code scales}.
 */
public record DeviceTensor(
        String key, long rows, long cols, List<Piece> pieces, WeightType type, List<ScalePiece> scales) {
    public DeviceTensor {
        pieces = List.copyOf(pieces);
        scales = List.copyOf(scales);
        for (Piece p : pieces) {
            if (p.cols() != cols || p.dstRowStart() + p.rows() > rows) {
                throw new IllegalArgumentException(key + " [" + rows + ", " + cols + "]: piece " + p + " does not fit");
            }
        }
        if (type.fp8() != !scales.isEmpty()) {
            throw new IllegalArgumentException(
                    key + ": a " + type + " tensor " + (type.fp8() ? "needs" : "has no") + " scales");
        }
        for (ScalePiece s : scales) {
            if (s.dstRowStart() + s.rows() > type.scaleRows(rows) || s.cols() != type.scaleCols(cols)) {
                throw new IllegalArgumentException(key + " [" + rows + ", " + cols + "] " + type + ": scale piece " + s
                        + " does not fit its scale grid");
            }
        }
    }

    /** A tensor in the model's dtype. */
    public DeviceTensor(String key, long rows, long cols, List<Piece> pieces) {
        this(key, rows, cols, pieces, WeightType.DENSE, List.of());
    }

    public long elements() {
        return rows * cols;
    }

    /** Bytes on the device: the elements in their storage type, plus the fp32 scales. */
    public long bytes(WeightDType dtype) {
        return elements() * type.elementBytes(dtype) + 4L * scaleCount();
    }

    /** fp32 scales of this tensor (0 for a dense one). */
    public long scaleCount() {
        return type.scaleCount(rows, cols);
    }

    /** Rows that some piece fills. */
    public long coveredRows() {
        return pieces.stream().mapToLong(Piece::rows).sum();
    }
}
