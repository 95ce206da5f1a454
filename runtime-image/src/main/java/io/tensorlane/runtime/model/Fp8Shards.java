package io.tensorlane.runtime.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The FP8 side of the shard plan: which layout each linear's device tensor takes, where its scales come from, and what
 * a quantized checkpoint must hold. Pure functions of the config ({@link ShardPlan} calls them).
 *
 * <p>Block scales cover 128 x 128 weights. Where every part of a device tensor starts on a 128-row block (in its source
 * and in the device tensor) and ends on one or at its source's edge, the device tensor keeps the compact grid, its
 * rows taken from each source's own grid ({@link WeightType#FP8_BLOCK}); otherwise (a fused part after 448 rows of q, a
 * rank's 192 rows) each weight row gets its block row's scales ({@link WeightType#FP8_BLOCK_ROWS}). Columns cannot be
 * expanded that way: a rank's window of o/down columns that cuts a block is refused (as vLLM refuses it), naming the
 * tensor, the rank and the columns. Per-row and per-tensor scales split with their rows.
 */
public final class Fp8Shards {
    /** Scale tensor dtypes read (converted to fp32 on the host). */
    static final Set<SafeDType> SCALE_DTYPES = Set.of(SafeDType.F32, SafeDType.BF16, SafeDType.F16);

    private Fp8Shards() {}

    /** The module of a weight tensor name: {@code model.layers.0.mlp.down_proj.weight} to {@code ...down_proj}. */
    static String module(String weightName) {
        return weightName.endsWith(".weight")
                ? weightName.substring(0, weightName.length() - ".weight".length())
                : weightName;
    }

    /**
     * The device tensor {@code key} [rows, cols] of a linear, filled by {@code pieces} of source weights whose shapes
     * are in {@code shapes}: dense when the model is not quantized (or these modules are left unquantized), else FP8 in
     * the quantization's layout with its scale pieces.
     */
    static DeviceTensor linear(
            TpLayout l, int rank, String key, long rows, long cols, List<Piece> pieces, Map<String, long[]> shapes) {
        Quantization q = l.config().quantization();
        WeightType type = q.weightType(module(pieces.get(0).source()));
        for (Piece p : pieces) {
            WeightType t = q.weightType(module(p.source()));
            if (t != type) {
                throw new ModelException(key + " fuses " + pieces.get(0).source() + " (" + type + ") and " + p.source()
                        + " (" + t + "); the parts of a fused linear must be stored alike (check the quantization "
                        + "config's list of unquantized modules)");
            }
        }
        if (!type.fp8()) {
            return new DeviceTensor(key, rows, cols, pieces);
        }
        if (type == WeightType.FP8_BLOCK && !pieces.stream().allMatch(p -> rowsOnBlocks(p, shapes.get(p.source())))) {
            type = WeightType.FP8_BLOCK_ROWS;
        }
        List<ScalePiece> scales = new ArrayList<>();
        int b = WeightType.BLOCK;
        for (Piece p : pieces) {
            long[] shape = shapes.get(p.source());
            String scale = q.scaleName(p.source());
            long gridCols = WeightType.ceilDiv(shape[1], b);
            if (type == WeightType.FP8_BLOCK || type == WeightType.FP8_BLOCK_ROWS) {
                checkColumns(l, rank, p, shape);
                long cols0 = p.srcColStart() / b;
                long ncols = WeightType.ceilDiv(p.cols(), b);
                // compact grid: block rows; per-row grid: weight rows, each reading its block row (b rows a source row)
                int g = type == WeightType.FP8_BLOCK ? b : 1;
                scales.add(new ScalePiece(
                        scale,
                        gridCols,
                        p.srcRowStart() / g,
                        cols0,
                        WeightType.ceilDiv(p.rows(), g),
                        ncols,
                        p.dstRowStart() / g,
                        false,
                        b / g));
            } else {
                boolean tensor = q.method() == Quantization.Method.FP8_TENSOR;
                scales.add(new ScalePiece(
                        scale, 1, tensor ? 0 : p.srcRowStart(), 0, p.rows(), 1, p.dstRowStart(), tensor));
            }
        }
        return new DeviceTensor(key, rows, cols, pieces, type, scales);
    }

    /** Whether the piece's rows start on a block, in its source and in the device tensor, and end on one or the edge. */
    static boolean rowsOnBlocks(Piece p, long[] shape) {
        int b = WeightType.BLOCK;
        return p.srcRowStart() % b == 0
                && p.dstRowStart() % b == 0
                && (p.rows() % b == 0 || p.srcRowStart() + p.rows() == shape[0]);
    }

    /** A window of columns (o/down at TP > 1) must start on a 128-column block and end on one or at the edge. */
    private static void checkColumns(TpLayout l, int rank, Piece p, long[] shape) {
        int b = WeightType.BLOCK;
        if (p.srcColStart() % b == 0 && (p.cols() % b == 0 || p.srcColStart() + p.cols() == shape[1])) {
            return;
        }
        String share = l.config().moe() != null && p.source().contains(".experts.")
                ? "each rank's share of an expert's down projection columns (the experts' intermediate size "
                        + l.config().moe().expertIntermediateSize() + " / " + l.tp() + " = "
                        + l.expertIntermediatePerRank() + ", moe_intermediate_size in config.json)"
                : "each rank's share of the o and down projections' columns (attention heads x head_dim, "
                        + "intermediate_size)";
        throw new ModelException("block-scaled FP8 at tensor parallel size " + l.tp() + ": rank " + rank
                + " would hold columns [" + p.srcColStart() + ", " + (p.srcColStart() + p.cols()) + ") of "
                + p.source() + " " + Arrays.toString(shape) + ", which cuts its " + b + "x" + b + " scale blocks; "
                + share + " must be a multiple of " + b + " (choose another tensor parallel size)");
    }

    /**
     * What a quantized checkpoint must hold for one linear weight {@code name} of shape [rows, cols] beyond the dense
     * case: an F8_E4M3 weight and its scale tensor (dtype F32, BF16 or F16; shape [ceil(rows/128), ceil(cols/128)]
     * for block scales, [rows, 1] or [rows] per channel, [1] or [] per tensor; a grid with a side of 1 may be stored
     * squeezed). Adds one message per problem.
     */
    static void expect(Quantization q, Checkpoint ck, String name, long[] shape, List<String> problems) {
        TensorInfo w = ck.find(name).orElse(null);
        if (w != null && w.dtype() != SafeDType.F8_E4M3) {
            problems.add("tensor " + name + " has dtype " + w.dtype() + ", expected F8_E4M3 (" + q.describe() + ")");
        }
        String sn = q.scaleName(name);
        long[] want = switch (q.method()) {
            case FP8_BLOCK ->
                new long[] {
                    WeightType.ceilDiv(shape[0], WeightType.BLOCK), WeightType.ceilDiv(shape[1], WeightType.BLOCK)
                };
            case FP8_CHANNEL -> new long[] {shape[0], 1};
            default -> new long[] {1};
        };
        TensorInfo s = ck.find(sn).orElse(null);
        if (s == null) {
            problems.add("missing scale tensor " + sn + ", expected shape " + Arrays.toString(want) + " F32 ("
                    + q.describe() + ")");
            return;
        }
        if (!Arrays.equals(squeeze(s.shape()), squeeze(want))) {
            problems.add("scale tensor " + sn + " has shape " + Arrays.toString(s.shape()) + ", expected "
                    + Arrays.toString(want) + " (" + q.describe() + ")");
        }
        if (!SCALE_DTYPES.contains(s.dtype())) {
            problems.add("scale tensor " + sn + " has dtype " + s.dtype() + ", expected F32, BF16 or F16");
        }
    }

    /** The shape without its dimensions of size 1. */
    static long[] squeeze(long[] shape) {
        return Arrays.stream(shape).filter(d -> d != 1).toArray();
    }
}
