package io.tensorlane.runtime.model;

/**
 * Copy the [rows x cols] window at (srcRowStart, srcColStart) of a checkpoint scale tensor, read row-major as
 * [elements / sourceCols, sourceCols] (so a grid stored squeezed, [n] for [1, n], reads the same), to rows
 * [dstRowStart, dstRowStart + rows) of a device tensor's scale grid; with {@code broadcast} the source is one value (a
 * per-tensor scale) written to every element of the window.
 */
public record ScalePiece(
        String source,
        long sourceCols,
        long srcRowStart,
        long srcColStart,
        long rows,
        long cols,
        long dstRowStart,
        boolean broadcast) {
    public ScalePiece {
        if (sourceCols <= 0
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
}
