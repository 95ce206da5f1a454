package io.tensorlane.runtime.model;

/**
 * Copy the [rows x cols] window at (srcRowStart, srcColStart) of the 2-D source tensor (a 1-D tensor [n] is [n, 1])
 * to destination rows [dstRowStart, dstRowStart + rows), destination column 0. {@code cols} always equals the
 * destination tensor's cols.
 */
public record Piece(String source, long srcRowStart, long srcColStart, long rows, long cols, long dstRowStart) {
    public Piece {
        if (srcRowStart < 0 || srcColStart < 0 || rows <= 0 || cols <= 0 || dstRowStart < 0) {
            throw new IllegalArgumentException("bad piece of " + source + ": rows [" + srcRowStart + ", +" + rows
                    + "), cols [" + srcColStart + ", +" + cols + ") -> row " + dstRowStart);
        }
    }

    /** Whether each source row's window is contiguous with the next one's (the window spans whole source rows). */
    public boolean wholeRows(long sourceCols) {
        return srcColStart == 0 && cols == sourceCols;
    }
}
