package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.Checkpoint;
import io.tensorlane.runtime.model.DeviceTensor;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.Piece;
import io.tensorlane.runtime.model.Rope;
import io.tensorlane.runtime.model.ScaleGrid;
import io.tensorlane.runtime.model.ShardPlan;
import io.tensorlane.runtime.model.WeightType;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * One rank's weight shards on its GPU, by the loader's keys ({@code layers.<l>.qkv}, {@code final_norm}, ...), each
 * with its storage type (FP8 ones with their fp32 scale grid beside them), and the RoPE tables, in the
 * {@link RankModel#WEIGHTS} phase of the rank's memory.
 */
final class RankWeights {
    /**
     * A loaded weight: its device address and type; for FP8 its scale grid's address and the grid in the layout of the
     * tensor-core GEMM ({@link CublasLt.Fp8Scaling}: block grids with rows padded to 4 scales; per-row scales repeated
     * for each 128 columns, one grid for both, as its first {@code rows} floats are the per-row vector; 0 where that
     * GEMM cannot read the type); {@code rows} and {@code rowBytes}: the shard's rows and the bytes of each (the scales
     * not counted).
     */
    record Weight(long address, WeightType type, long scales, long gemmScales, long rows, long rowBytes) {
        /** The tensor-core GEMM's scale layout for this weight (null: none, the GEMV or dequantization path). */
        CublasLt.Fp8Scaling gemmScaling() {
            return gemmScales == 0
                    ? null
                    : type == WeightType.FP8_ROW ? CublasLt.Fp8Scaling.ROW : CublasLt.Fp8Scaling.BLOCK;
        }
    }

    private final DeviceMemory mem;
    private final ModelConfig cfg;
    private final Map<String, Weight> byKey = new HashMap<>();
    private long cos;
    private long sin;

    RankWeights(DeviceMemory mem, ModelConfig cfg) {
        this.mem = mem;
        this.cfg = cfg;
    }

    /**
     * Uploads this rank's shards ({@code plan}) from the checkpoint and the RoPE tables for {@code maxPositions};
     * {@code progress} gets bytes as they land. Returns the shards' bytes (with their scales).
     */
    long load(Checkpoint ck, List<DeviceTensor> plan, int maxPositions, LongConsumer progress) {
        long total = 0;
        for (DeviceTensor t : plan) {
            int eb = t.type().elementBytes(cfg.dtype());
            long bytes = t.rows() * t.cols() * eb;
            CUdeviceptr p = mem.alloc(RankModel.WEIGHTS, t.key(), bytes, t.coveredRows() < t.rows());
            for (Piece pc : t.pieces()) {
                PieceCopy.copy(ck, pc, p, t.cols(), eb, progress);
            }
            long scales = 0;
            long gemmScales = 0;
            if (t.type().fp8()) {
                float[] grid = ScaleGrid.build(ck, t);
                if (t.type() == WeightType.FP8_ROW) {
                    // one upload: the 1x128 grid's first group row is the per-row vector the GEMV reads
                    scales = upload(
                            ScaleGrid.rowsPerGroup(grid, ScaleGrid.groups(t.cols(), CublasLt.Fp8Scaling.GROUP)),
                            t.key() + " scales (per row, repeated per 128 columns)");
                    gemmScales = scales;
                } else {
                    scales = upload(grid, t.key() + " scales");
                    if (t.type() == WeightType.FP8_BLOCK) {
                        int cols = (int) t.type().scaleCols(t.cols());
                        float[] padded = ScaleGrid.padRows(grid, cols, CublasLt.BLOCK_SCALE_ROW_MULTIPLE);
                        gemmScales = padded == grid ? scales : upload(padded, t.key() + " scales (GEMM rows)");
                    }
                }
            }
            byKey.put(
                    t.key(), new Weight(Cuda.address(p), t.type(), scales, gemmScales, t.rows(), (long) t.cols() * eb));
            total += t.bytes(cfg.dtype());
        }
        float[][] cs = Rope.cosSin(cfg, maxPositions);
        cos = upload(cs[0], "rope cos");
        sin = upload(cs[1], "rope sin");
        return total;
    }

    /** Uploads {@code host} as fp32 in this rank's weights; its device address. */
    long upload(float[] host, String what) {
        CUdeviceptr p = mem.alloc(RankModel.WEIGHTS, what, 4L * host.length, false);
        Cuda.check(cuMemcpyHtoD(p, Pointer.to(host), 4L * host.length), "upload " + what);
        return Cuda.address(p);
    }

    /** The device address of a loaded weight. */
    long get(String key) {
        return weight(key).address();
    }

    /** A loaded weight with its type and scales. */
    Weight weight(String key) {
        Weight w = byKey.get(key);
        if (w == null) {
            throw new IllegalStateException("weight " + key + " was not loaded");
        }
        return w;
    }

    /** The device address of an optional weight (bias, q/k norm), 0 when the model has none. */
    long getOrZero(String key) {
        Weight w = byKey.get(key);
        return w == null ? 0 : w.address();
    }

    /**
     * Elements of the largest FP8 linear weight (0 when none): the bf16/fp16 scratch its dequantization needs. The
     * stacked experts are not counted: long MoE steps dequantize one expert at a time into their own scratch
     * ({@link ExpertGemms}).
     */
    static long largestFp8(List<DeviceTensor> plan) {
        return plan.stream()
                .filter(t -> t.type().fp8() && !ShardPlan.isExperts(t.key()))
                .mapToLong(DeviceTensor::elements)
                .max()
                .orElse(0);
    }

    /** RoPE cos table [maxPositions, headDim / 2] fp32. */
    long cos() {
        return cos;
    }

    /** RoPE sin table [maxPositions, headDim / 2] fp32. */
    long sin() {
        return sin;
    }
}
