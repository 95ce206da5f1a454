package io.tensorlane.runtime.llm;

import io.tensorlane.contract.DType;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.engine.HostTensors;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * One rank's paged KV cache: per layer a K and a V array of [blocks x blockSize slots, kvHeads, headDim] elements, in
 * the activations' dtype or, for {@link KvCacheDtype#FP8}, as e4m3 codes (1 byte) with the layer's fp32 scale pair
 * {k_scale, v_scale} on the GPU (tl_kvcache.cuh). The arithmetic of its size is here, so the blocks that fit a budget
 * follow the element's real bytes: fp8 holds twice the tokens of a 16-bit cache in the same memory.
 */
final class KvCache {
    private final DeviceMemory mem;
    private final int layers;
    private final int blockSize;
    private final int kvHeads;
    private final int headDim;
    private final KvCacheDtype dtype;
    private final int elementBytes;
    private final DType act;
    private long base;
    private long layerBytes;
    private int blocks;
    /** {k0, v0, k1, v1, ...} fp32 on the GPU (fp8 only; 0 before {@link #setScales}). */
    private long scales;

    KvCache(DeviceMemory mem, int layers, int blockSize, int kvHeads, int headDim, KvCacheDtype dtype, DType act) {
        this.mem = mem;
        this.layers = layers;
        this.blockSize = blockSize;
        this.kvHeads = kvHeads;
        this.headDim = headDim;
        this.dtype = dtype;
        this.elementBytes = dtype.elementBytes(act);
        this.act = act;
    }

    /** Bytes one block of {@code blockSize} tokens takes: all layers, K and V, {@code elementBytes} an element. */
    static long bytesPerBlock(int layers, int blockSize, int kvHeads, int headDim, int elementBytes) {
        return 2L * layers * blockSize * kvHeads * headDim * elementBytes;
    }

    /** Whole blocks of {@code perBlock} bytes in {@code budget} bytes (0 for a negative budget). */
    static int blocksThatFit(long budget, long perBlock) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(0, budget / perBlock));
    }

    /**
     * The engine's line about a KV cache of {@code dtype} for a model computing in {@code act} (null: nothing to say,
     * the activations' dtype as asked): an FP8 cache and where its scales come from, or {@link KvCacheDtype#note}.
     */
    static String describe(KvCacheDtype dtype, DType act, boolean checkpointScales) {
        if (dtype.fp8()) {
            return "FP8 KV cache (e4m3, 1 byte an element): per-layer k/v scales "
                    + (checkpointScales ? "from the checkpoint" : "1.0 (the checkpoint has none)");
        }
        return dtype.note(act);
    }

    long bytesPerBlock() {
        return bytesPerBlock(layers, blockSize, kvHeads, headDim, elementBytes);
    }

    boolean fp8() {
        return dtype.fp8();
    }

    KvCacheDtype dtype() {
        return dtype;
    }

    /** Uses the scales {k0, v0, k1, v1, ...} already on the GPU at {@code address} (fp8 only). */
    void setScales(long address) {
        if (!fp8()) {
            throw new IllegalStateException("a " + dtype + " KV cache has no scales");
        }
        scales = address;
    }

    void allocate(int n) {
        this.blocks = n;
        this.layerBytes = (long) n * blockSize * kvHeads * headDim * elementBytes;
        this.base = Cuda.address(
                mem.alloc(RankModel.KV, "KV cache (" + n + " blocks, " + dtype + ")", layerBytes * 2 * layers, true));
    }

    int blocks() {
        return blocks;
    }

    /** Layer {@code l}'s K array. */
    long k(int l) {
        return base + 2L * l * layerBytes;
    }

    /** Layer {@code l}'s V array. */
    long v(int l) {
        return k(l) + layerBytes;
    }

    /**
     * Layer {@code l}'s K (or, with {@code value}, V) of {@code ids}: each block's {@code blockSize} slots of
     * [kvHeads, headDim] elements, in order, as floats. A 16-bit cache only (an FP8 cache's codes would need its
     * scales). Synchronous copies: the caller runs it on the rank's thread after the rank's stream is done.
     */
    float[] read(int l, boolean value, int[] ids) {
        if (fp8()) {
            throw new IllegalStateException("reading an FP8 KV cache back is not supported (16-bit caches only)");
        }
        if (l < 0 || l >= layers) {
            throw new IllegalArgumentException(
                    "layer " + l + " is not a layer of this cache (0.." + (layers - 1) + ")");
        }
        int per = blockSize * kvHeads * headDim;
        short[] raw = new short[per];
        float[] out = new float[Math.multiplyExact(ids.length, per)];
        long base = value ? v(l) : k(l);
        for (int i = 0; i < ids.length; i++) {
            if (ids[i] < 0 || ids[i] >= blocks) {
                throw new IllegalArgumentException(
                        "block " + ids[i] + " is not a block of this cache (0.." + (blocks - 1) + ")");
            }
            Cuda.check(
                    JCudaDriver.cuMemcpyDtoH(
                            Pointer.to(raw),
                            new CUdeviceptr().withByteOffset(base + (long) ids[i] * per * elementBytes),
                            (long) per * elementBytes),
                    "read KV block " + ids[i]);
            for (int j = 0; j < per; j++) {
                out[i * per + j] =
                        act == DType.bf16 ? HostTensors.bf16ToFloat(raw[j]) : HostTensors.halfToFloat(raw[j]);
            }
        }
        return out;
    }

    /** Layer {@code l}'s {k_scale, v_scale} on the GPU (0 for a 16-bit cache). */
    long scales(int l) {
        if (fp8() && scales == 0) {
            throw new IllegalStateException("the FP8 KV cache's scales were not uploaded");
        }
        return fp8() ? scales + 8L * l : 0;
    }
}
