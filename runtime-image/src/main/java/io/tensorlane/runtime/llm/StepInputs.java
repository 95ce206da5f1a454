package io.tensorlane.runtime.llm;

import static jcuda.driver.JCudaDriver.cuMemAllocHost;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import io.tensorlane.contract.SamplingBuffers;
import io.tensorlane.runtime.engine.Cuda;
import io.tensorlane.runtime.sched.SamplingRows;
import io.tensorlane.runtime.sched.StepBatch;
import java.nio.ByteOrder;
import java.nio.IntBuffer;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUstream;

/**
 * One rank's step inputs: int32 device buffers at fixed addresses (a captured graph reads them there) and one pinned
 * host buffer laid out the same way. A step writes its arrays into the pinned buffer and enqueues asynchronous copies
 * of the used part of each on the rank's stream, so the host does not wait for each copy (with synchronous copies from
 * the Java heap a batch-1 decode step of the 8B geometry took 5.33 ms, 5.18 ms with this and the ids read back in the
 * same rank task; H200, 2026-12-01). The sampled ids come
 * back the same way: an asynchronous copy into the pinned buffer, read after the stream is synchronized.
 *
 * <p>The pinned buffer is reused by the next step, so a step's copies must have finished before the next stage: the
 * engine synchronizes the rank's stream at the end of every step.
 */
final class StepInputs implements AutoCloseable {
    /** The device buffers, in the order of the host layout. */
    enum Buf {
        IDS,
        POSITIONS,
        SLOTS,
        TOKEN_ROW,
        TABLES,
        LOGIT_TOKENS,
        ATTN_TILES,
        ATTN_REST,
        SAMPLING,
        PENALTIES,
        OUT_IDS,
        /** The ids of a chain of greedy steps ({@link ChainedSteps}): written on the device, read back once. */
        CHAIN_OUT
    }

    private final long[] device = new long[Buf.values().length];
    private final long[] hostOffset = new long[Buf.values().length];
    private final long[] capacity = new long[Buf.values().length];
    /** Per buffer: how many leading ints the device holds from uploads (their host copy is equal). */
    private final int[] written = new int[Buf.values().length];

    private final Pointer pinned = new Pointer();
    private final IntBuffer host;

    /**
     * Allocates the device buffers ({@code ints[b]} int32 each, zeroed) from {@code mem} and the pinned host buffer.
     */
    StepInputs(DeviceMemory mem, String phase, long[] ints) {
        if (ints.length != Buf.values().length) {
            throw new IllegalArgumentException("one size per buffer: " + Buf.values().length + ", got " + ints.length);
        }
        long off = 0;
        for (Buf b : Buf.values()) {
            int i = b.ordinal();
            capacity[i] = Math.max(1, ints[i]);
            device[i] = Cuda.address(mem.alloc(phase, "step input " + b.name().toLowerCase(), 4L * capacity[i], true));
            hostOffset[i] = off;
            off += (4L * capacity[i] + 255) / 256 * 256;
        }
        if (off / 4 > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("step inputs of " + off + " bytes exceed one host buffer");
        }
        Cuda.check(cuMemAllocHost(pinned, off), "cuMemAllocHost(step inputs, " + off + " bytes)");
        host = pinned.getByteBuffer(0, off).order(ByteOrder.nativeOrder()).asIntBuffer();
    }

    /** Whether the device's sampling parameters may hold a non-greedy row (else all greedy: no upload needed). */
    private boolean samplingDirty;

    /** Ids a row's token mask covers (the model's vocabulary: the sampler's logits rows). */
    private int maskVocab;

    /**
     * The buffers of a model's steps of at most {@code dims}; {@code samplingCapacity} rows of sampling parameters, each
     * with a token mask slot over {@code vocab} ids; on the rank that samples ({@code sampler}) room for every row's
     * penalty pairs ({@link #penaltyInts}; a word elsewhere).
     */
    static StepInputs forModel(
            DeviceMemory mem, String phase, RankModel.Dims dims, int samplingCapacity, int vocab, boolean sampler) {
        StepInputs in = new StepInputs(mem, phase, sizes(dims, samplingCapacity, vocab, sampler));
        in.samplingCapacity = samplingCapacity;
        in.maskVocab = vocab;
        return in;
    }

    /** Int32 words of each buffer ({@link Buf} order) for {@link #forModel}; pure. */
    static long[] sizes(RankModel.Dims dims, int samplingCapacity, int vocab, boolean sampler) {
        long t = dims.maxTokens();
        long m = dims.maxLogitRows();
        long[] ints = new long[Buf.values().length];
        ints[Buf.IDS.ordinal()] = t;
        ints[Buf.POSITIONS.ordinal()] = t;
        ints[Buf.SLOTS.ordinal()] = t;
        ints[Buf.TOKEN_ROW.ordinal()] = t;
        ints[Buf.TABLES.ordinal()] = (long) dims.maxRows() * dims.maxBlocksPerSeq();
        ints[Buf.LOGIT_TOKENS.ordinal()] = m;
        ints[Buf.ATTN_TILES.ordinal()] = 2L * Math.max(1, AttentionPlan.maxTiles((int) t));
        ints[Buf.ATTN_REST.ordinal()] = t;
        ints[Buf.SAMPLING.ordinal()] = SamplingRows.layoutWords(samplingCapacity, vocab); // zeros: greedy, unmasked
        // one draw per sequence and step: at most maxRows penalised rows (not every logits row of a prompt-logits dump)
        int penaltyRows = SamplingBuffers.penaltyRows(samplingCapacity, dims.maxRows());
        ints[Buf.PENALTIES.ordinal()] = sampler ? penaltyInts(penaltyRows, dims.maxPositions(), vocab) : 1;
        ints[Buf.OUT_IDS.ordinal()] = m;
        ints[Buf.CHAIN_OUT.ordinal()] = m;
        return ints;
    }

    /**
     * Stages step {@code b} (with attention layout {@code plan}) and enqueues its copies on {@code stream}; the sampling
     * parameters only where {@code sampling} (rank 0) and only when some row, now or in the previous upload, is not
     * greedy.
     */
    void upload(StepBatch b, AttentionPlan plan, boolean sampling, CUstream stream) {
        int n = b.tokens();
        put(Buf.IDS, b.tokenIds(), n, stream);
        put(Buf.POSITIONS, b.positions(), n, stream);
        put(Buf.SLOTS, b.slots(), n, stream);
        put(Buf.TOKEN_ROW, b.tokenRow(), n, stream);
        put(Buf.TABLES, b.blockTables(), b.blockTables().length, stream);
        put(Buf.LOGIT_TOKENS, b.logitTokens(), b.logitTokens().length, stream);
        put(Buf.ATTN_TILES, plan.tiles(), plan.tiles().length, stream);
        put(Buf.ATTN_REST, plan.rest(), plan.rest().length, stream);
        SamplingRows sr = b.sampling();
        if (sampling && (samplingDirty || !sr.trivial())) {
            int[] words = sr.pack(samplingCapacity);
            put(Buf.SAMPLING, words, words.length, stream);
            int maskWords = SamplingRows.maskWords(maskVocab);
            for (int r = 0; r < sr.rows(); r++) {
                int[] mask = sr.mask(r);
                if (mask == null) {
                    continue;
                }
                if (mask.length != maskWords) {
                    throw new IllegalArgumentException("row " + r + ": token mask of " + mask.length + " words, the "
                            + "vocabulary of " + maskVocab + " needs " + maskWords);
                }
                putAt(Buf.SAMPLING, SamplingRows.maskOffset(samplingCapacity, r, maskVocab), mask, stream);
            }
            int[] pen = sr.packPenalties();
            put(Buf.PENALTIES, pen, pen.length, stream); // none (nothing copied) unless a row is penalised
            samplingDirty = !sr.trivial();
        }
    }

    /**
     * Int32 words of the penalty pairs of {@code capacity} rows of sequences of at most {@code maxModelLen} tokens: the
     * most every row can need at once ({@link SamplingBuffers#penaltyInts}), so no step can overflow it (a step with
     * more penalised rows, e.g. several draws per sequence, fails its upload with a message, it does not write past).
     */
    static long penaltyInts(int capacity, int maxModelLen, int vocab) {
        return SamplingBuffers.penaltyInts(capacity, maxModelLen, vocab);
    }

    /** Rows of sampling parameters the device buffer holds (the capacity the sampler is launched with). */
    private int samplingCapacity;

    /**
     * Writes {@code src} at int offset {@code at} of {@code b}'s host part and enqueues its copy, unless the host part
     * (always what the device holds) already equals it (a row whose automaton stays in one state reuploads nothing).
     */
    boolean putAt(Buf b, long at, int[] src, CUstream stream) {
        int i = b.ordinal();
        if (at < 0 || at + src.length > capacity[i]) {
            throw new IllegalArgumentException(
                    b + ": ints [" + at + ", " + (at + src.length) + ") exceed the buffer (" + capacity[i] + ")");
        }
        int h = (int) (hostOffset[i] / 4 + at);
        if (host.slice(h, src.length).equals(IntBuffer.wrap(src))) {
            return false;
        }
        host.put(h, src, 0, src.length);
        Cuda.check(
                cuMemcpyHtoDAsync(
                        new CUdeviceptr().withByteOffset(device[i] + 4 * at),
                        pinned.withByteOffset(hostOffset[i] + 4 * at),
                        4L * src.length,
                        stream),
                "upload step input " + b + " at " + at);
        return true;
    }

    /** The device address of {@code b} (fixed for the life of this object). */
    long device(Buf b) {
        return device[b.ordinal()];
    }

    /**
     * Writes {@code n} ints of {@code src} into {@code b}'s host part and enqueues their copy to the device, unless the
     * device already holds them: the host part always equals what was last copied, so when its first {@code n} ints
     * equal {@code src}'s, the copy is skipped (a decode step's row numbers, logits rows and block tables seldom change
     * from one step to the next). Returns whether a copy was enqueued.
     */
    boolean put(Buf b, int[] src, int n, CUstream stream) {
        if (n <= 0) {
            return false;
        }
        int i = b.ordinal();
        if (n > capacity[i] || n > src.length) {
            throw new IllegalArgumentException(
                    b + ": " + n + " ints exceed the buffer (" + capacity[i] + ") or the source (" + src.length + ")");
        }
        int at = (int) (hostOffset[i] / 4);
        if (written[i] >= n && host.slice(at, n).equals(IntBuffer.wrap(src, 0, n))) {
            return false;
        }
        host.put(at, src, 0, n);
        written[i] = Math.max(written[i], n);
        Cuda.check(
                cuMemcpyHtoDAsync(
                        new CUdeviceptr().withByteOffset(device[i]),
                        pinned.withByteOffset(hostOffset[i]),
                        4L * n,
                        stream),
                "upload step input " + b);
        return true;
    }

    /**
     * Forgets what the device holds of {@code bufs} (a kernel wrote them: {@link ChainedSteps}), so that the next
     * {@link #put} copies its ints whatever the host part holds.
     */
    void invalidate(Buf... bufs) {
        for (Buf b : bufs) {
            written[b.ordinal()] = 0;
        }
    }

    /** Enqueues the copy of the first {@code n} ints of device buffer {@code b} into its host part. */
    void fetch(Buf b, int n, CUstream stream) {
        if (n <= 0) {
            return;
        }
        int i = b.ordinal();
        if (n > capacity[i]) {
            throw new IllegalArgumentException(b + ": " + n + " ints exceed the buffer (" + capacity[i] + ")");
        }
        Cuda.check(
                cuMemcpyDtoHAsync(
                        pinned.withByteOffset(hostOffset[i]),
                        new CUdeviceptr().withByteOffset(device[i]),
                        4L * n,
                        stream),
                "read step output " + b);
    }

    /** The first {@code n} ints of {@code b}'s host part (after {@link #fetch} and a synchronize of its stream). */
    int[] read(Buf b, int n) {
        int[] out = new int[n];
        host.get((int) (hostOffset[b.ordinal()] / 4), out, 0, n);
        return out;
    }

    /** Frees the pinned buffer (the device buffers belong to the {@link DeviceMemory}); on the rank's thread. */
    @Override
    public void close() {
        cuMemFreeHost(pinned);
    }
}
