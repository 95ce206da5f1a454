package io.tensorlane.runtime.model;

import java.util.List;

/**
 * One device buffer of the model dtype, row-major [rows, cols], filled from checkpoint windows. Rows that no piece
 * covers (vocabulary padding) must be zero-filled.
 */
public record DeviceTensor(String key, long rows, long cols, List<Piece> pieces) {
    public DeviceTensor {
        pieces = List.copyOf(pieces);
        for (Piece p : pieces) {
            if (p.cols() != cols || p.dstRowStart() + p.rows() > rows) {
                throw new IllegalArgumentException(key + " [" + rows + ", " + cols + "]: piece " + p + " does not fit");
            }
        }
    }

    public long elements() {
        return rows * cols;
    }

    public long bytes(WeightDType dtype) {
        return elements() * dtype.bytes();
    }

    /** Rows that some piece fills. */
    public long coveredRows() {
        return pieces.stream().mapToLong(Piece::rows).sum();
    }
}
