package io.tensorlane.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One GPU's memory at engine start-up, as one description shared by the operator's memory planner (which sizes the
 * static fraction from it) and the GPU node simulator (which decides from it whether a pod dies of CUDA OOM). The
 * allreduce buffers are exact ({@link BufferLayout}); the other non-static figures are documented estimates, each in
 * one place here. Pure.
 *
 * <p>Start-up order, as the Tensorlane runtime allocates ({@code serve}): the CUDA context, the static pool
 * ({@code fraction × total}, rounded down to the 2 MiB granule, as {@code StaticPool} takes it), the custom-allreduce
 * IPC buffers, then NCCL's buffers, the activation workspace and the CUDA graphs; the reserve is what must stay free for
 * fragmentation and libraries. The first allocation that does not fit in what is left is the CUDA OOM.
 */
public final class MemoryBudget {
    private static final long MIB = 1024L * 1024;
    /** CUDA context plus cuBLAS/cuBLASLt handles and workspaces of one process per GPU: 500–600 MiB on recent GPUs. */
    public static final long CUDA_CONTEXT_BYTES = 560 * MIB;
    /** Private memory pool of the captured CUDA graphs (decode batch sizes up to {@link #MAX_SEQUENCES}). */
    public static final long CUDA_GRAPH_BYTES = 1024 * MIB;
    /**
     * NCCL communicator buffers for world size > 1: 16 channels × 2 ring peers × 4 MiB (NCCL_BUFFSIZE default)
     * plus 64 MiB of fixed state. The same for every world size > 1 (rings talk to two peers); 0 for world size 1.
     */
    public static final long NCCL_BYTES = 16 * 2 * 4 * MIB + 64 * MIB;
    /** Attention-backend workspace (FlashInfer/FlashAttention split-KV buffers). */
    public static final long ATTENTION_WORKSPACE_BYTES = 256 * MIB;
    /**
     * Live activation tensors are multiplied by this: the caching allocator's peak includes freed-but-cached blocks of
     * other sizes and overlapping lifetimes. An estimate; to be tuned against engine logs.
     */
    public static final int ACTIVATION_PEAK_FACTOR = 2;
    /** Logits rows: engines sample at most this many sequences per step (their default max running requests). */
    public static final int MAX_SEQUENCES = 256;
    /** Full-vocabulary fp32 buffers per logits row in {@link #activationBytes}: logits and probabilities. */
    public static final int LOGITS_BUFFERS = 2;

    public static final String PHASE_CONTEXT = "cuda-context";
    public static final String PHASE_NCCL = "nccl";
    public static final String PHASE_ACTIVATIONS = "activations";
    public static final String PHASE_CUDA_GRAPHS = "cuda-graphs";
    public static final String PHASE_RESERVE = "reserve";
    /**
     * The KV cache's allocation (the Tensorlane runtime's {@code RankModel.KV}, the phase of its termination message
     * when the cache does not fit); in {@link #startup} only as what weights and KV caches take beyond the static pool.
     */
    public static final String PHASE_KV_CACHE = "kv-cache";

    private MemoryBudget() {}

    /**
     * The model dimensions the activation workspace depends on (config.json names in brackets).
     *
     * @param hiddenSize hidden_size
     * @param attentionHeads num_attention_heads
     * @param kvHeads num_key_value_heads
     * @param headDim head_dim
     * @param intermediateSize intermediate_size
     * @param vocabSize vocab_size (0 when unknown)
     * @param dtypeBytes bytes per activation element
     */
    public record Dims(
            int hiddenSize,
            int attentionHeads,
            int kvHeads,
            int headDim,
            int intermediateSize,
            int vocabSize,
            int dtypeBytes) {}

    /**
     * Activation workspace on one GPU for a forward pass of {@code tokens}: tokens × dtype × (4 × hidden [residual,
     * normed input, attention out, MLP out] + (heads + 2 × kvHeads) / TP × headDim [QKV] + 3 × intermediate / TP [gate,
     * up, activation]) × {@link #ACTIVATION_PEAK_FACTOR}, plus fp32 logits and probabilities for {@link #MAX_SEQUENCES}
     * rows of the full vocabulary (gathered on every rank), plus {@link #ATTENTION_WORKSPACE_BYTES}.
     */
    public static long activationBytes(Dims d, long tokens, int tp) {
        long qkv = (ceilDiv(d.attentionHeads(), tp) + 2L * Math.max(1, ceilDiv(d.kvHeads(), tp))) * d.headDim();
        long perToken = 4L * d.hiddenSize() + qkv + 3L * ceilDiv(d.intermediateSize(), tp);
        long live = tokens * d.dtypeBytes() * perToken * ACTIVATION_PEAK_FACTOR;
        long logits = Math.min(tokens, MAX_SEQUENCES) * (long) d.vocabSize() * Float.BYTES * LOGITS_BUFFERS;
        return live + logits + ATTENTION_WORKSPACE_BYTES;
    }

    /**
     * The sampling buffers of a GPU that samples ({@link SamplingBuffers}; rank 0, the fullest): {@code
     * parametersAndMasks} on every rank, {@code penaltyPairs} on the sampling rank.
     */
    public record Sampling(long parametersAndMasks, long penaltyPairs) {
        public long total() {
            return parametersAndMasks + penaltyPairs;
        }
    }

    /**
     * The Tensorlane runtime's sampling buffers ({@link SamplingBuffers}) for forward passes of {@code tokens}: up to
     * {@code min(tokens, }{@link #MAX_SEQUENCES}{@code )} sequences a step, as the logits estimate of {@link
     * #activationBytes} takes them, each with {@code speculativeTokens + 1} logits rows (the k proposed tokens verified,
     * and the one after them; one row without speculation), of at most {@code maxModelLen} tokens over {@code vocab}
     * ids; the engine's step rows are its sequences plus one. Zeros when the vocabulary is unknown (0).
     */
    public static Sampling samplingBytes(int vocab, long tokens, int speculativeTokens, int maxModelLen) {
        if (vocab <= 0 || tokens <= 0) {
            return new Sampling(0, 0);
        }
        int sequences = (int) Math.min(tokens, MAX_SEQUENCES);
        int logitRows = Math.multiplyExact(sequences, speculativeTokens + 1);
        return new Sampling(
                SamplingBuffers.parameterBytes(logitRows, vocab),
                SamplingBuffers.penaltyBytes(logitRows, sequences + 1, maxModelLen, vocab));
    }

    /**
     * What speculative decoding with {@code k} proposed tokens per sequence and step adds to {@link #activationBytes}
     * (0 for {@code k = 0}): a verify step computes k + 1 logits rows per sequence, so the {@link #LOGITS_BUFFERS}
     * full-vocabulary fp32 buffers grow from {@code min(tokens, MAX_SEQUENCES)} rows to that × (k + 1), i.e. by
     * {@code min(tokens, MAX_SEQUENCES) × k × vocab × 4 × 2} bytes. The Tensorlane runtime sizes its logits buffers for
     * {@code maxSeqs × (k + 1)} rows ({@code SpeculativeConfig.logitRows}); the planner counts the same for every
     * engine, and so does the node simulator.
     */
    public static long speculativeLogitsBytes(int vocabSize, long tokens, int k) {
        if (k <= 0 || vocabSize <= 0) {
            return 0;
        }
        long extraRows = Math.multiplyExact(Math.min(tokens, MAX_SEQUENCES), (long) k);
        return Math.multiplyExact(extraRows, (long) vocabSize) * Float.BYTES * LOGITS_BUFFERS;
    }

    /**
     * KV-cache bytes per token on one GPU: 2 (K and V) × layers × max(1, ⌈kvHeads / TP⌉) × headDim × element bytes. KV
     * heads are split by tensor parallelism; when TP exceeds them, each GPU keeps (a replica of) one head. The figure
     * the planner sizes both caches with and the node simulator checks the pod's KV tokens against.
     */
    public static long kvBytesPerToken(int layers, int kvHeads, int headDim, int tp, int elementBytes) {
        return 2L * layers * Math.max(1, ceilDiv(kvHeads, tp)) * headDim * elementBytes;
    }

    /** NCCL's buffers: {@link #NCCL_BYTES} for TP > 1, else 0. */
    public static long ncclBytes(int tp) {
        return tp > 1 ? NCCL_BYTES : 0;
    }

    /** Custom-allreduce device buffers per rank ({@link BufferLayout}); 0 without the custom allreduce or at TP 1. */
    public static long ipcBytes(boolean customAllreduce, int tp, long maxMessageBytes) {
        return customAllreduce && tp > 1 ? BufferLayout.of(tp, maxMessageBytes).totalBytesPerRank() : 0;
    }

    /** The static pool the runtime takes: {@code fraction × total}, rounded down to the 2 MiB allocation granule. */
    public static long staticPoolBytes(double fraction, long totalBytes) {
        return (long) (fraction * totalBytes) / BufferLayout.PEER_GRANULE * BufferLayout.PEER_GRANULE;
    }

    /**
     * Everything one GPU needs besides the static pool.
     *
     * @param reserve bytes kept free for fragmentation and libraries (memory.reserveMiB)
     */
    public record NonStatic(long activations, long cudaContext, long cudaGraphs, long nccl, long ipc, long reserve) {
        public long total() {
            return activations + cudaContext + cudaGraphs + nccl + ipc + reserve;
        }
    }

    public static NonStatic nonStatic(
            Dims d, long tokens, int tp, boolean customAllreduce, long maxMessageBytes, long reserveBytes) {
        return nonStatic(d, tokens, tp, customAllreduce, maxMessageBytes, reserveBytes, 0);
    }

    /** {@link #nonStatic}, the activations with {@link #speculativeLogitsBytes} of {@code speculativeTokens} (k). */
    public static NonStatic nonStatic(
            Dims d,
            long tokens,
            int tp,
            boolean customAllreduce,
            long maxMessageBytes,
            long reserveBytes,
            int speculativeTokens) {
        return new NonStatic(
                activationBytes(d, tokens, tp) + speculativeLogitsBytes(d.vocabSize(), tokens, speculativeTokens),
                CUDA_CONTEXT_BYTES,
                CUDA_GRAPH_BYTES,
                ncclBytes(tp),
                ipcBytes(customAllreduce, tp, maxMessageBytes),
                reserveBytes);
    }

    /** One start-up allocation. */
    public record Allocation(String phase, long bytes) {}

    /** The allocation that failed, what it asked for and what was free then. */
    public record Oom(String phase, long requestedBytes, long freeBytes, long totalBytes) {}

    /** The allocations of an engine's start-up in the order it makes them. */
    public static List<Allocation> startup(long staticPoolBytes, NonStatic n) {
        List<Allocation> a = new ArrayList<>();
        a.add(new Allocation(PHASE_CONTEXT, n.cudaContext()));
        a.add(new Allocation(TerminationMessage.PHASE_STATIC_POOL, staticPoolBytes));
        a.add(new Allocation(TerminationMessage.PHASE_IPC_BUFFERS, n.ipc()));
        a.add(new Allocation(PHASE_NCCL, n.nccl()));
        a.add(new Allocation(PHASE_ACTIVATIONS, n.activations()));
        a.add(new Allocation(PHASE_CUDA_GRAPHS, n.cudaGraphs()));
        a.add(new Allocation(PHASE_RESERVE, n.reserve()));
        return a;
    }

    /** The first of {@code allocations} that does not fit on a GPU of {@code totalBytes}; empty when all fit. */
    public static Optional<Oom> firstFailure(long totalBytes, List<Allocation> allocations) {
        long free = totalBytes;
        for (Allocation x : allocations) {
            if (x.bytes() > free) {
                return Optional.of(new Oom(x.phase(), x.bytes(), free, totalBytes));
            }
            free -= x.bytes();
        }
        return Optional.empty();
    }

    private static long ceilDiv(long a, long b) {
        return (a + b - 1) / b;
    }
}
