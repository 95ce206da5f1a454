package io.tensorlane.runtime.model;

/**
 * Copy the [rows x cols] window at (srcRowStart, srcColStart) of a checkpoint scale tensor, read row-major as
 * [elements / sourceCols, sourceCols] (so a grid stored squeezed, [n] for [1, n], reads the same), to rows
 * [dstRowStart, dstRowStart + rows) of a device tensor's scale grid; with {@code broadcast} the source is one value (a
 * per-tensor scale) written to every element of the window. Window row r reads source row
 * {@code (srcRowStart + r) / rowsPerSourceRow}: 1 for a plain window; 128 to repeat a block grid's row for each of
 * its weight rows ({@link WeightType#FP8_BLOCK_ROWS}, srcRowStart then in weight rows).
 */
public record ScalePiece(
        String source,
        long sourceCols,
        long srcRowStart,
        long srcColStart,
        long rows,
        long cols,
        long dstRowStart,
        boolean broadcast,
        int rowsPerSourceRow) {
    public ScalePiece {
        if (rowsPerSourceRow <= 0
                || sourceCols <= 0
                || srcRowStart < 0
                || srcColStart < 0
                || rows <= 0
                || cols <= 0
                || dstRowStart < 0
                || srcColStart + cols > sourceCols) {
            throw new IllegalArgumentException("bad scale piece of " + source + ": rows [" + srcRowStart + ", +" + rows
                    + "), cols [" + srcColStart + ", +" + cols + ") -> row " + dstRowStart);
        }
    }

    /** A plain window (one source row a window row). */
    public ScalePiece(
            String source,
            long sourceCols,
            long srcRowStart,
            long srcColStart,
            long rows,
            long cols,
            long dstRowStart,
            boolean broadcast) {
        this(source, sourceCols, srcRowStart, srcColStart, rows, cols, dstRowStart, broadcast, 1);
    }

    /** The source row window row {@code r} reads. */
    public long sourceRow(long r) {
        return (srcRowStart + r) / rowsPerSourceRow;
    }
}
