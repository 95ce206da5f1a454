package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.model.Checkpoint;
import io.tensorlane.runtime.model.DeviceTensor;
import io.tensorlane.runtime.model.ModelConfig;
import io.tensorlane.runtime.model.Piece;
import io.tensorlane.runtime.model.Rope;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongConsumer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * One rank's weight shards on its GPU, by the loader's keys ({@code layers.<l>.qkv}, {@code final_norm}, ...), and the
 * RoPE tables, in the {@link RankModel#WEIGHTS} phase of the rank's memory.
 */
final class RankWeights {
    private final DeviceMemory mem;
    private final DType dt;
    private final Map<String, Long> byKey = new HashMap<>();
    private long cos;
    private long sin;

    RankWeights(DeviceMemory mem, DType dt) {
        this.mem = mem;
        this.dt = dt;
    }

    /**
     * Uploads this rank's shards ({@code plan}) from the checkpoint and the RoPE tables for {@code maxPositions};
     * {@code progress} gets bytes as they land. Returns the shards' bytes.
     */
    long load(Checkpoint ck, List<DeviceTensor> plan, ModelConfig cfg, int maxPositions, LongConsumer progress) {
        long total = 0;
        for (DeviceTensor t : plan) {
            long bytes = t.rows() * t.cols() * dt.bytes();
            long covered = t.pieces().stream().mapToLong(Piece::rows).sum();
            CUdeviceptr p = mem.alloc(RankModel.WEIGHTS, t.key(), bytes, covered < t.rows());
            for (Piece pc : t.pieces()) {
                PieceCopy.copy(ck, pc, p, t.cols(), dt, progress);
            }
            byKey.put(t.key(), Cuda.address(p));
            total += bytes;
        }
        float[][] cs = Rope.cosSin(cfg, maxPositions);
        cos = upload(cs[0], "rope cos");
        sin = upload(cs[1], "rope sin");
        return total;
    }

    private long upload(float[] host, String what) {
        CUdeviceptr p = mem.alloc(RankModel.WEIGHTS, what, 4L * host.length, false);
        Cuda.check(cuMemcpyHtoD(p, Pointer.to(host), 4L * host.length), "upload " + what);
        return Cuda.address(p);
    }

    /** The device address of a loaded weight. */
    long get(String key) {
        Long a = byKey.get(key);
        if (a == null) {
            throw new IllegalStateException("weight " + key + " was not loaded");
        }
        return a;
    }

    /** The device address of an optional weight (bias, q/k norm), 0 when the model has none. */
    long getOrZero(String key) {
        return byKey.getOrDefault(key, 0L);
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
