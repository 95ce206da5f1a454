package io.tensorlane.runtime.model;

/**
 * How one device tensor's elements are stored: in the model's dtype (bf16/fp16), or as FP8 e4m3 with fp32 scales in
 * one of the two layouts the kernels read (tl_fp8.cuh). A property of each tensor, chosen per linear by
 * {@link Quantization#weightType}.
 */
public enum WeightType {
    /** The config dtype, no scales. */
    DENSE,
    /** e4m3 + one fp32 scale per 128 x 128 block: a scale grid [ceil(rows / 128), ceil(cols / 128)]. */
    FP8_BLOCK,
    /**
     * The same 128 x 128 block scales, their row repeated for each weight row: [rows, ceil(cols / 128)]. For a device
     * tensor whose rows do not start on block boundaries (a fused part after one of, e.g., 448 rows; a rank's share
     * of 192 rows): 1/32 more bytes than the weight's, where the compact grid adds 1/4096.
     */
    FP8_BLOCK_ROWS,
    /** e4m3 + one fp32 scale per output row: [rows] (per-channel; a per-tensor scale is repeated for its rows). */
    FP8_ROW;

    /** Rows and columns of one scale block of {@link #FP8_BLOCK}. */
    public static final int BLOCK = 128;

    public boolean fp8() {
        return this != DENSE;
    }

    /** Bytes of one element: the model dtype's, or 1 for FP8. */
    public int elementBytes(WeightDType model) {
        return this == DENSE ? model.bytes() : 1;
    }

    /** Rows of the device scale tensor of a [rows, cols] weight (0 for DENSE). */
    public long scaleRows(long rows) {
        return switch (this) {
            case DENSE -> 0;
            case FP8_BLOCK -> ceilDiv(rows, BLOCK);
            case FP8_BLOCK_ROWS, FP8_ROW -> rows;
        };
    }

    /** Columns of the device scale tensor of a [rows, cols] weight (0 for DENSE). */
    public long scaleCols(long cols) {
        return switch (this) {
            case DENSE -> 0;
            case FP8_BLOCK, FP8_BLOCK_ROWS -> ceilDiv(cols, BLOCK);
            case FP8_ROW -> 1;
        };
    }

    /** Weight rows that share one row of the scale grid: 128 for {@link #FP8_BLOCK}, else 1 (the kernels' row_block). */
    public int rowBlock() {
        return this == FP8_BLOCK ? BLOCK : 1;
    }

    /**
     * Floats of the scale tensor before the scales of weight row {@code row} of a [*, cols] weight: where the slice
     * starting at that row (an expert of a stacked MoE weight) finds its scales. The row must start a scale row (a
     * 128-row block for {@link #FP8_BLOCK}: the loader keeps the compact grid only where every part starts on one).
     */
    public long scaleOffset(long row, long cols) {
        if (row % rowBlock() != 0) {
            throw new IllegalStateException(
                    "a slice from row " + row + " starts inside a " + rowBlock() + "-row scale block (" + this + ")");
        }
        return row / rowBlock() * scaleCols(cols);
    }

    /** fp32 scales of a [rows, cols] weight. */
    public long scaleCount(long rows, long cols) {
        return scaleRows(rows) * scaleCols(cols);
    }

    static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
